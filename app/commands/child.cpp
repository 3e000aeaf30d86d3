#include "app/commands/child.hpp"

#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include "app/commands/common.hpp"

namespace mlsb::cli {
namespace {

volatile pid_t g_child = 0;  // the child the handler passes signals on to

extern "C" void pass_on(int sig) {
  interrupted = true;
  if (g_child > 0) ::kill(g_child, sig);
}

// Copies the child's output from `fd` to `file` (and our stderr with tee) until it closes.
void copy_output(int fd, std::ofstream& file, bool tee) {
  char buf[4096];
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, -1);
    if (ready < 0 && errno == EINTR) continue;  // a signal: passed on by the handler
    if (ready < 0) return;
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    if (tee) std::fwrite(buf, 1, static_cast<size_t>(n), stderr);
    file.write(buf, n);
    file.flush();
  }
}

}  // namespace

int run_child(const std::vector<std::string>& argv, const ChildOutput& output) {
  std::ofstream file;
  int fds[2] = {-1, -1};
  if (!output.file.empty()) {
    file.open(output.file, std::ios::binary | (output.append ? std::ios::app : std::ios::trunc));
    if (!file) throw std::runtime_error("cannot write " + output.file.string() + ": " + std::strerror(errno));
    if (output.append) {
      std::string line = "$";
      for (const auto& a : argv) line += " " + a;
      file << line << "\n";
    }
    if (::pipe(fds) != 0) throw std::runtime_error(std::string("cannot create a pipe: ") + std::strerror(errno));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (fds[1] >= 0) {
    posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions, fds[1], STDERR_FILENO);
    posix_spawn_file_actions_addclose(&actions, fds[0]);
  }
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  using Handler = void (*)(int);
  const Handler before[] = {std::signal(SIGINT, pass_on), std::signal(SIGTERM, pass_on), std::signal(SIGHUP, pass_on)};
  const bool was_interrupted = interrupted;
  pid_t pid = 0;
  const int err = ::posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (fds[1] >= 0) ::close(fds[1]);
  int status = 0;
  if (err == 0) {
    g_child = pid;
    if (interrupted && !was_interrupted) ::kill(pid, SIGTERM);  // a signal before g_child was set
    if (fds[0] >= 0) copy_output(fds[0], file, output.tee);
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    g_child = 0;
  }
  if (fds[0] >= 0) ::close(fds[0]);
  std::signal(SIGINT, before[0]);
  std::signal(SIGTERM, before[1]);
  std::signal(SIGHUP, before[2]);
  if (err != 0) throw std::runtime_error("cannot start " + argv[0] + ": " + std::strerror(err));
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

}  // namespace mlsb::cli
