// Every kernel launch of the GPU codecs is checked where it happens: a rejected launch (too many threads, no
// kernel image for this GPU) leaves only an error in the runtime's last-error slot, which no later
// synchronisation reports; unchecked, the codec decodes garbage as success and the next check_launch blames
// another workload. Read from the sources: each call of a launcher that compress/cuda/kernels.hpp declares is
// followed at once by launched(...).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

namespace {

std::string source_text(const char* relative) {
  std::ifstream in(std::filesystem::path(MLSB_SOURCE_DIR) / relative);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(CodecLaunches, EveryLauncherCallIsCheckedAtOnce) {
  std::set<std::string> launchers;
  const std::string decls = source_text("workloads/compress/cuda/kernels.hpp");
  static const std::regex decl(R"(\nvoid ([a-z_]+)\()");
  for (std::sregex_iterator it(decls.begin(), decls.end(), decl), end; it != end; ++it) launchers.insert((*it)[1]);
  EXPECT_GE(launchers.size(), 9u);
  const std::string code = source_text("workloads/compress/gpu_codecs.cpp");
  int calls = 0;
  for (const auto& name : launchers)
    for (size_t at = code.find("detail::" + name + "("); at != std::string::npos;
         at = code.find("detail::" + name + "(", at + 1)) {
      ++calls;
      const size_t end = code.find(';', at);
      const size_t next = code.find_first_not_of(" \n", end + 1);
      EXPECT_EQ(code.compare(next, 9, "launched("), 0)
          << "gpu_codecs.cpp: the call of " << name << " at byte " << at << " is not checked at once";
    }
  EXPECT_GE(calls, 12);
}

}  // namespace
