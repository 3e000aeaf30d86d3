// The CUDA sources share no file-scope name: CMake 3.31 and later put .cu files into unity batches, where
// two files' kThreads, grid_for or decode_kernel in one namespace no longer compile (the build marks .cu
// files out of unity batches too; this keeps each helper in one home). Names are read from the lines of
// every .cu file that start a declaration at namespace scope (the code style leaves namespace bodies
// unindented): variables, functions, kernels, types and aliases (not using-declarations, which may repeat).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>

namespace {

namespace fs = std::filesystem;

// The names a .cu file declares at namespace scope.
std::set<std::string> file_scope_names(const fs::path& file) {
  static const std::regex decl(
      R"(^(?:(?:static|inline|constexpr|__global__|__device__|__host__|__forceinline__)\s+)*)"  // specifiers
      R"((?:struct|class|enum(?:\s+class)?|using|namespace|(?:const\s+)?[A-Za-z_][\w:<>, *&]*?[\s*&]+)\s*)"  // kind or type
      R"((?:__launch_bounds__\([^)]*\)\s*)?([A-Za-z_]\w*)\s*(?:[(={;:\[]|$))");
  std::set<std::string> names;
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == ' ' || line[0] == '#' || line[0] == '}' || line.rfind("//", 0) == 0 ||
        line.rfind("template", 0) == 0 || line.rfind("namespace mlsb", 0) == 0 || line == "namespace {")
      continue;
    if (line.rfind("using ", 0) == 0 && line.find('=') == std::string::npos) continue;  // a using-declaration
    if (std::smatch m; std::regex_search(line, m, decl)) names.insert(m[1]);
  }
  return names;
}

TEST(CudaSources, NoFileScopeNameRepeatsAcrossCuFiles) {
  std::map<std::string, std::set<std::string>> where;  // name -> files
  int files = 0;
  for (const auto& e : fs::recursive_directory_iterator(fs::path(MLSB_SOURCE_DIR) / "workloads")) {
    if (e.path().extension() != ".cu") continue;
    ++files;
    for (const auto& name : file_scope_names(e.path()))
      where[name].insert(fs::relative(e.path(), MLSB_SOURCE_DIR).string());
  }
  EXPECT_GE(files, 9);
  for (const auto& [name, in] : where) {
    if (in.size() < 2) continue;
    std::string list;
    for (const auto& f : in) list += " " + f;
    ADD_FAILURE() << "'" << name << "' is declared at file scope in" << list;
  }
  // The reader sees what it must: the helpers that collided before they got one home each.
  const auto exponent = file_scope_names(fs::path(MLSB_SOURCE_DIR) / "workloads/compress/cuda/exponent.cu");
  EXPECT_TRUE(exponent.count("exponent_decode_kernel") && exponent.count("kDecodeThreads") && exponent.count("Histogram"));
}

}  // namespace
