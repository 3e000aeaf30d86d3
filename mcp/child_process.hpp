#pragma once
// A spawned child process (no shell) in a process group of its own, with its stdin on a socket pair (as
// Node's child_process gives its children), its stdout on a pipe and its stderr on a file or a pipe.
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
  std::string stderr_path;                  ///< appended to; "" = /dev/null (unless stderr_pipe)
  bool stderr_pipe = false;                 ///< stderr on a pipe read through stderr_fd() instead
};

class ChildProcess {
 public:
  /// Spawns the child as the leader of a new process group (pgid = pid), so stop() reaches whatever it
  /// starts in turn. Every descriptor we keep is O_CLOEXEC, so no other child inherits it; our end of its
  /// stdin is non-blocking. Throws std::system_error when the socket pair, the pipes, the stderr file or
  /// posix_spawn fail.
  explicit ChildProcess(const SpawnOptions& options);
  /// stop()s the child.
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  int stdout_fd() const { return stdout_fd_; }
  /// The read end of the child's stderr with SpawnOptions::stderr_pipe, else -1.
  int stderr_fd() const { return stderr_fd_; }

  enum class WriteResult { ok, closed, timed_out };
  /// Writes all of `bytes` to the child's stdin within `timeout` (waiting for a writer before us counts
  /// too). `closed`: the child no longer reads (EPIPE) or stdin is closed. `timed_out`: the child did not
  /// take the bytes in time; part of them may have been written, so stdin is closed (the stream is
  /// broken) and later writes return `closed`. Writes are send(MSG_NOSIGNAL): no SIGPIPE is raised, and
  /// signal dispositions and masks are left alone.
  WriteResult write_stdin(std::string_view bytes, std::chrono::milliseconds timeout);
  /// Closes the child's stdin (the MCP stdio way of asking a server to exit). Idempotent.
  void close_stdin();
  /// The raw wait status once the child has exited and been reaped, waiting at most `wait`.
  std::optional<int> wait_for(std::chrono::milliseconds wait);
  /// Closes stdin and waits `grace` for the child to exit. Then, while any process of its group is alive
  /// (the child or what it started), sends SIGTERM to the group, waits `grace`, and sends SIGKILL to the
  /// group. Always reaps the child; waits at most `grace` for the rest of the group to die of SIGKILL.
  void stop(std::chrono::milliseconds grace) noexcept;
  /// "exited with status 3" / "was killed by signal 9 (Killed)".
  static std::string describe(int wait_status);

 private:
  std::optional<int> try_reap();
  /// Whether a process of the child's group other than a zombie exists (reaps the child first).
  bool group_alive();
  /// Waits until group_alive() is false, at most `wait`; returns whether it is.
  bool wait_group_gone(std::chrono::milliseconds wait);

  pid_t pid_ = -1;
  int stdout_fd_ = -1;
  int stderr_fd_ = -1;
  int stdin_fd_ = -1;
  std::timed_mutex write_mu_;         ///< guards stdin_fd_
  std::mutex reap_mu_;                ///< guards status_ (and so kill() never hits a reused pid)
  std::optional<int> status_;
};

}  // namespace mlsb::mcp
