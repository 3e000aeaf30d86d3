#include "mcp/child_process.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace mlsb::mcp {
namespace {

using namespace std::chrono_literals;

SpawnOptions shell(const std::string& script) { return {"/bin/sh", {"sh", "-c", script}, {}, "", ""}; }

std::string read_all(int fd) {
  std::string out;
  char buf[256];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) out.append(buf, static_cast<size_t>(n));
  return out;
}

TEST(McpChildProcess, ReportsExitStatus) {
  ChildProcess child(shell("exit 7"));
  const auto status = child.wait_for(5s);
  ASSERT_TRUE(status);
  EXPECT_EQ(ChildProcess::describe(*status), "exited with status 7");
}

TEST(McpChildProcess, WritingToAnExitedChildFailsWithoutSigpipe) {
  ChildProcess child(shell("exec 0<&-; exit 0"));
  ASSERT_TRUE(child.wait_for(5s));
  // With SIGPIPE at its default disposition, this would kill the test binary.
  EXPECT_FALSE(child.write_stdin("{\"jsonrpc\":\"2.0\"}\n"));
  EXPECT_FALSE(child.write_stdin("again\n"));
  child.close_stdin();
  EXPECT_FALSE(child.write_stdin("closed\n"));
}

TEST(McpChildProcess, StopEscalatesToSigtermForAChildIgnoringStdin) {
  ChildProcess child(shell("exec sleep 30"));
  const auto start = std::chrono::steady_clock::now();
  child.stop(100ms);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
  const auto status = child.wait_for(0ms);
  ASSERT_TRUE(status);
  EXPECT_TRUE(WIFSIGNALED(*status));
  EXPECT_EQ(WTERMSIG(*status), SIGTERM);
}

TEST(McpChildProcess, OurEndsOfThePipesAreNotInherited) {
  // The child lists where each of its descriptors points. Its stdout is the pipe whose read end we hold;
  // had that read end leaked (no O_CLOEXEC), the same pipe would show up twice.
  ChildProcess child(shell("for f in /proc/$$/fd/*; do readlink $f; done"));
  struct stat st{};
  ASSERT_EQ(::fstat(child.stdout_fd(), &st), 0);
  const std::string ours = "pipe:[" + std::to_string(st.st_ino) + "]";
  const std::string listing = read_all(child.stdout_fd());
  size_t count = 0;
  for (size_t pos = 0; (pos = listing.find(ours, pos)) != std::string::npos; pos += ours.size()) ++count;
  EXPECT_EQ(count, 1u) << listing;
}

TEST(McpChildProcess, EnvAndCwd) {
  ChildProcess child({"/bin/sh", {"sh", "-c", "echo \"$MLSB_X $(pwd)\""}, {{"MLSB_X", "set"}}, "/tmp", ""});
  EXPECT_EQ(read_all(child.stdout_fd()), "set /tmp\n");
}

}  // namespace
}  // namespace mlsb::mcp
