// NCCL forbids other work on a communicator's stream while a group may still be launching (a non-blocking
// communicator returns ncclInProgress from ncclGroupEnd and launches on its own thread), and a throw inside a
// group would leave it open: in the NCCL communicator nothing is queued between a group's ncclGroupStart()
// and the call that consumes its ncclGroupEnd() (wait(...) or a return to one). Read from the source: no GPU
// or NCCL runs here.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace {

TEST(NcclGroups, NothingIsQueuedInsideAGroupOrBeforeItsLaunchIsAwaited) {
  std::ifstream in(std::filesystem::path(MLSB_SOURCE_DIR) / "backends/comm/nccl_communicator.cpp");
  std::stringstream text;
  text << in.rdbuf();
  const std::string code = text.str();
  int groups = 0;
  for (size_t start = code.find("ncclGroupStart();"); start != std::string::npos;
       start = code.find("ncclGroupStart();", start + 1)) {
    ++groups;
    const size_t end = code.find("ncclGroupEnd()", start);
    ASSERT_NE(end, std::string::npos) << "a group at byte " << start << " is never ended";
    const std::string inside = code.substr(start, end - start);
    for (const char* queued : {"copy(", "enqueued(", "cudaEventRecord", "cudaMemset", "<<<"})
      EXPECT_EQ(inside.find(queued), std::string::npos) << "'" << queued << "' inside the group at byte " << start;
    // The group's result goes straight to wait(): written as wait("...", ncclGroupEnd()) or returned to one.
    const size_t line = code.rfind('\n', end);
    const std::string before = code.substr(line + 1, end - line - 1);
    EXPECT_TRUE(before.find("wait(") != std::string::npos || before.find("return ") != std::string::npos)
        << "the ncclGroupEnd() at byte " << end << " is not consumed at once: " << before;
  }
  EXPECT_GE(groups, 3);
  // exchange() returns its group's result; each caller hands it to wait() before queueing anything else.
  for (size_t at = code.find("exchange(send"); at != std::string::npos; at = code.find("exchange(send", at + 1)) {
    const size_t line = code.rfind('\n', at);
    EXPECT_NE(code.substr(line + 1, at - line - 1).find("wait("), std::string::npos) << "exchange at byte " << at;
  }
}

}  // namespace
