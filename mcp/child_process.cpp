#include "mcp/child_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
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
  int in[2], out[2];
  if (::pipe2(in, O_CLOEXEC) != 0) throw_errno(errno, "pipe2");
  Fd in_r{in[0]}, in_w{in[1]};
  if (::pipe2(out, O_CLOEXEC) != 0) throw_errno(errno, "pipe2");
  Fd out_r{out[0]}, out_w{out[1]};
  const std::string err_path = options.stderr_path.empty() ? "/dev/null" : options.stderr_path;
  Fd err{::open(err_path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644)};
  if (err.fd < 0) throw_errno(errno, "cannot open stderr log '" + err_path + "'");

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in_r.fd, STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, out_w.fd, STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err.fd, STDERR_FILENO);
  if (!options.cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, options.cwd.c_str());

  // The child starts with no blocked signals and SIGPIPE at its default, whatever our threads did.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

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
}

ChildProcess::~ChildProcess() {
  stop(std::chrono::milliseconds(1000));
  if (stdout_fd_ >= 0) ::close(stdout_fd_);
}

bool ChildProcess::write_stdin(std::string_view bytes) {
  std::lock_guard lock(write_mu_);
  if (stdin_fd_ < 0) return false;
  sigset_t pipe_set, old_mask, pending;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  sigpending(&pending);
  const bool was_pending = sigismember(&pending, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_set, &old_mask);
  bool ok = true;
  while (!bytes.empty()) {
    const ssize_t n = ::write(stdin_fd_, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      ok = false;
      break;
    }
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  if (!ok && !was_pending) {
    const timespec zero{0, 0};
    sigtimedwait(&pipe_set, nullptr, &zero);  // discard the SIGPIPE our failed write raised
  }
  pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  return ok;
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
  // Only used while a child is on its way out, so a short backoff poll costs nothing per message.
  const auto deadline = std::chrono::steady_clock::now() + wait;
  auto step = std::chrono::microseconds(200);
  while (true) {
    if (auto s = try_reap()) return s;
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(step);
    step = std::min(step * 2, std::chrono::microseconds(20000));
  }
}

void ChildProcess::stop(std::chrono::milliseconds grace) noexcept {
  if (pid_ <= 0) return;
  close_stdin();
  for (int sig : {SIGTERM, SIGKILL}) {
    if (wait_for(grace)) return;
    std::lock_guard lock(reap_mu_);
    if (!status_) ::kill(pid_, sig);
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
