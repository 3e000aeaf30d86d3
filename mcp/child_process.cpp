#include "mcp/child_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <system_error>
#include <thread>
#include <utility>

extern char** environ;

namespace mlsb::mcp {

namespace {

[[noreturn]] void throw_errno(int err, const std::string& what) {
  throw std::system_error(err, std::generic_category(), what);
}

std::vector<std::string> child_environment(const std::map<std::string, std::string>& extra) {
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) {
    const std::string_view kv = *e;
    const auto name = kv.substr(0, kv.find('='));
    if (!extra.contains(std::string(name))) env.emplace_back(kv);
  }
  for (const auto& [k, v] : extra) env.push_back(k + "=" + v);
  return env;
}

std::vector<char*> c_strings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

/// Polls `done` with a short backoff until it holds or `wait` passes; returns its last value. Only used
/// while a child is on its way out, so polling costs nothing per message.
template <typename Pred>
bool poll_until(Pred done, std::chrono::milliseconds wait) {
  const auto deadline = std::chrono::steady_clock::now() + wait;
  auto step = std::chrono::microseconds(200);
  while (true) {
    if (done()) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(step);
    step = std::min(step * 2, std::chrono::microseconds(20000));
  }
}

/// Whether /proc lists a process of group `pgid` that is not a zombie. (kill(-pgid, 0) would count
/// zombies too, and orphans of the group may stay zombies where pid 1 does not reap them.)
bool live_process_in_group(pid_t pgid) {
  namespace fs = std::filesystem;
  for (const auto& entry : fs::directory_iterator("/proc", fs::directory_options::skip_permission_denied)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(entry.path() / "stat");
    std::string stat;
    if (!std::getline(in, stat)) continue;  // gone meanwhile
    // "pid (comm) state ppid pgrp ...": comm may hold anything, so fields start after the last ')'.
    const size_t paren = stat.rfind(')');
    if (paren == std::string::npos || paren + 2 >= stat.size()) continue;
    const char state = stat[paren + 2];
    const size_t ppid_end = stat.find(' ', paren + 4);
    if (ppid_end == std::string::npos) continue;
    pid_t pgrp = 0;
    std::from_chars(stat.data() + ppid_end + 1, stat.data() + stat.size(), pgrp);
    if (pgrp == pgid && state != 'Z' && state != 'X') return true;
  }
  return false;
}

/// Closes a descriptor on scope exit unless released.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
  int release() { return std::exchange(fd, -1); }
};

}  // namespace

ChildProcess::ChildProcess(const SpawnOptions& options) {
  // stdin is a socket so that write_stdin() can send(MSG_NOSIGNAL): one system call per message, where a
  // pipe needs SIGPIPE blocked around each write. Node's child_process does the same for its children.
  int in[2], out[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, in) != 0) throw_errno(errno, "socketpair");
  Fd in_r{in[0]}, in_w{in[1]};
  if (::pipe2(out, O_CLOEXEC) != 0) throw_errno(errno, "pipe2");
  Fd out_r{out[0]}, out_w{out[1]};
  // Our end of stdin never blocks: write_stdin() waits for room with poll() and a deadline.
  if (::fcntl(in_w.fd, F_SETFL, O_NONBLOCK) != 0) throw_errno(errno, "fcntl");
  Fd err, err_r;
  if (options.stderr_pipe) {
    int e[2];
    if (::pipe2(e, O_CLOEXEC) != 0) throw_errno(errno, "pipe2");
    err_r.fd = e[0];
    err.fd = e[1];
  } else {
    const std::string err_path = options.stderr_path.empty() ? "/dev/null" : options.stderr_path;
    err.fd = ::open(err_path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (err.fd < 0) throw_errno(errno, "cannot open stderr log '" + err_path + "'");
  }

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in_r.fd, STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, out_w.fd, STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err.fd, STDERR_FILENO);
  if (!options.cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, options.cwd.c_str());

  // The child starts with no blocked signals and SIGPIPE at its default, whatever our threads did, and
  // leads a new process group (pgroup 0 = its own pid).
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);

  std::vector<std::string> argv = options.argv, env = child_environment(options.env);
  auto c_argv = c_strings(argv), c_env = c_strings(env);
  const int rc = ::posix_spawn(&pid_, options.executable.c_str(), &actions, &attr, c_argv.data(), c_env.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    throw_errno(rc, "cannot start '" + options.executable.string() + "'" +
                        (options.cwd.empty() ? "" : " in '" + options.cwd + "'"));
  }
  stdin_fd_ = in_w.release();
  stdout_fd_ = out_r.release();
  stderr_fd_ = err_r.release();
}

ChildProcess::~ChildProcess() {
  stop(std::chrono::milliseconds(1000));
  for (int fd : {stdout_fd_, stderr_fd_}) {
    if (fd >= 0) ::close(fd);
  }
}

ChildProcess::WriteResult ChildProcess::write_stdin(std::string_view bytes, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::unique_lock lock(write_mu_, deadline);
  if (!lock.owns_lock()) return WriteResult::timed_out;
  if (stdin_fd_ < 0) return WriteResult::closed;
  while (!bytes.empty()) {
    const ssize_t n = ::send(stdin_fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n >= 0) {
      bytes.remove_prefix(static_cast<size_t>(n));
      continue;
    }
    if (errno == EINTR) continue;
    if (errno != EAGAIN) return WriteResult::closed;
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      ::close(std::exchange(stdin_fd_, -1));  // part of a message may be on the socket: the stream is broken
      return WriteResult::timed_out;
    }
    pollfd pfd{stdin_fd_, POLLOUT, 0};
    ::poll(&pfd, 1, static_cast<int>(left.count()));  // room, error, timeout or EINTR: the loop looks again
  }
  return WriteResult::ok;
}

void ChildProcess::close_stdin() {
  std::lock_guard lock(write_mu_);
  if (stdin_fd_ >= 0) ::close(std::exchange(stdin_fd_, -1));
}

std::optional<int> ChildProcess::try_reap() {
  std::lock_guard lock(reap_mu_);
  if (!status_) {
    int status = 0;
    pid_t r;
    do r = ::waitpid(pid_, &status, WNOHANG);
    while (r < 0 && errno == EINTR);
    if (r == pid_) status_ = status;
  }
  return status_;
}

std::optional<int> ChildProcess::wait_for(std::chrono::milliseconds wait) {
  poll_until([&] { return try_reap().has_value(); }, wait);
  return try_reap();
}

bool ChildProcess::group_alive() {
  if (!try_reap()) return true;
  try {
    return live_process_in_group(pid_);
  } catch (const std::exception&) {  // /proc unreadable: assume the group is gone
    return false;
  }
}

bool ChildProcess::wait_group_gone(std::chrono::milliseconds wait) {
  return poll_until([&] { return !group_alive(); }, wait);
}

void ChildProcess::stop(std::chrono::milliseconds grace) noexcept {
  if (pid_ <= 0) return;
  close_stdin();
  wait_for(grace);
  for (int sig : {SIGTERM, SIGKILL}) {
    if (!group_alive()) return;
    // The group outlives a reaped leader only while a member lives, so its id cannot have been reused.
    ::kill(-pid_, sig);
    wait_group_gone(grace);
  }
  while (!wait_for(std::chrono::milliseconds(1000))) {
  }
}

std::string ChildProcess::describe(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    return "was killed by signal " + std::to_string(WTERMSIG(status)) + " (" + strsignal(WTERMSIG(status)) + ")";
  }
  return "ended with wait status " + std::to_string(status);
}

}  // namespace mlsb::mcp
