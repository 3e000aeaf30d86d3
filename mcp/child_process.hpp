#pragma once
// A spawned child process (no shell) with its stdin and stdout on pipes and its stderr on a file.
#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mlsb::mcp {

struct SpawnOptions {
  std::filesystem::path executable;         ///< resolved path (see find_executable)
  std::vector<std::string> argv;            ///< argv[0] as given by the user
  std::map<std::string, std::string> env;   ///< added to (or replacing in) our environment
  std::string cwd;                          ///< "" = ours
  std::string stderr_path;                  ///< appended to; "" = /dev/null
};

class ChildProcess {
 public:
  /// Spawns the child. Every descriptor we keep is O_CLOEXEC, so no other child inherits it.
  /// Throws std::system_error when the pipes, the stderr file or posix_spawn fail.
  explicit ChildProcess(const SpawnOptions& options);
  /// stop()s the child.
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  int stdout_fd() const { return stdout_fd_; }
  /// Writes all of `bytes` to the child's stdin. Returns false when the child no longer reads (EPIPE) or
  /// stdin is closed. SIGPIPE is blocked in this thread for the write and a resulting one discarded,
  /// so the process's signal disposition is left alone.
  bool write_stdin(std::string_view bytes);
  /// Closes the child's stdin (the MCP stdio way of asking a server to exit). Idempotent.
  void close_stdin();
  /// The raw wait status once the child has exited and been reaped, waiting at most `wait`.
  std::optional<int> wait_for(std::chrono::milliseconds wait);
  /// Closes stdin, waits `grace` for exit, sends SIGTERM, waits `grace`, sends SIGKILL; always reaps.
  void stop(std::chrono::milliseconds grace) noexcept;
  /// "exited with status 3" / "was killed by signal 9 (Killed)".
  static std::string describe(int wait_status);

 private:
  std::optional<int> try_reap();

  pid_t pid_ = -1;
  int stdout_fd_ = -1;
  int stdin_fd_ = -1;
  std::mutex write_mu_;               ///< guards stdin_fd_
  std::mutex reap_mu_;                ///< guards status_ (and so kill() never hits a reused pid)
  std::optional<int> status_;
};

}  // namespace mlsb::mcp
