#include "mcp/child_process.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <sstream>
#include <thread>

namespace mlsb::mcp {
namespace {

using namespace std::chrono_literals;

SpawnOptions shell(const std::string& script) { return {"/bin/sh", {"sh", "-c", script}, {}, "", "", false}; }

/// The states of the processes of group `pgid`, as ps lists them (zombies show as "Z").
std::string group_states(pid_t pgid) {
  const std::string cmd = "ps -o stat= -g " + std::to_string(pgid);
  FILE* ps = ::popen(cmd.c_str(), "r");
  std::string out;
  char buf[256];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, ps)) > 0;) out.append(buf, n);
  ::pclose(ps);
  return out;
}

/// Whether a process of group `pgid` other than a zombie exists.
bool live_in_group(pid_t pgid) {
  std::istringstream states(group_states(pgid));
  for (std::string s; states >> s;) {
    if (s[0] != 'Z') return true;
  }
  return false;
}

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
  EXPECT_EQ(child.write_stdin("{\"jsonrpc\":\"2.0\"}\n", 1s), ChildProcess::WriteResult::closed);
  EXPECT_EQ(child.write_stdin("again\n", 1s), ChildProcess::WriteResult::closed);
  child.close_stdin();
  EXPECT_EQ(child.write_stdin("closed\n", 1s), ChildProcess::WriteResult::closed);
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

TEST(McpChildProcess, StopKillsWhatTheChildStartedToo) {
  for (const char* script :
       {"echo garbage; sleep 1000", "(sleep 1000 &); sleep 1000", "(exec 0<&-; sleep 1000) & exit 0"}) {
    ChildProcess child(shell(script));
    ASSERT_EQ(::getpgid(child.pid()), child.pid()) << "not a group leader: " << script;
    std::this_thread::sleep_for(50ms);  // the background sleep is started
    const auto start = std::chrono::steady_clock::now();
    child.stop(100ms);
    EXPECT_LT(std::chrono::steady_clock::now() - start, 2s) << script;
    EXPECT_FALSE(live_in_group(child.pid())) << script << ": " << group_states(child.pid());
    EXPECT_TRUE(child.wait_for(0ms)) << script;
  }
}

TEST(McpChildProcess, WriteToAChildThatDoesNotReadTimesOut) {
  ChildProcess child(shell("exec sleep 30"));
  const std::string big(1 << 20, 'x');  // more than a pipe holds
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(child.write_stdin(big, 200ms), ChildProcess::WriteResult::timed_out);
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_GE(took, 190ms);
  EXPECT_LT(took, 1s);
  EXPECT_EQ(child.write_stdin("x\n", 200ms), ChildProcess::WriteResult::closed);  // the stream is broken
}

TEST(McpChildProcess, StderrOnAPipe) {
  SpawnOptions options = shell("echo to-stderr >&2");
  options.stderr_pipe = true;
  ChildProcess child(options);
  EXPECT_EQ(read_all(child.stderr_fd()), "to-stderr\n");
  EXPECT_EQ(shell("true").stderr_pipe, false);
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
  ChildProcess child({"/bin/sh", {"sh", "-c", "echo \"$MLSB_X $(pwd)\""}, {{"MLSB_X", "set"}}, "/tmp", "", false});
  EXPECT_EQ(read_all(child.stdout_fd()), "set /tmp\n");
}

}  // namespace
}  // namespace mlsb::mcp
