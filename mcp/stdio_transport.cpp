#include "mcp/stdio_transport.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <utility>

#include "mcp/command_lookup.hpp"
#include "mcp/jsonrpc.hpp"

namespace mlsb::mcp {

using nlohmann::json;

namespace {
constexpr auto kStopGrace = std::chrono::milliseconds(1000);
constexpr auto kExitStatusWait = std::chrono::milliseconds(500);
constexpr auto kStderrDrain = std::chrono::milliseconds(100);
/// How long no caller must have read before the background reader takes over: calls closer together
/// than this never wake it (it only looks once per period), and a server request between calls waits
/// at most about twice this for its answer.
constexpr auto kIdleHandover = std::chrono::milliseconds(20);
constexpr size_t kChunk = 65536;
/// What each descriptor of the epoll set is, in its event's data.
constexpr uint32_t kStdoutTag = 0, kStderrTag = 1, kWakeTag = 2, kInterruptTag = 3;
}  // namespace

StdioTransport::StdioTransport(const ServerSpec& spec) : spec_(spec), warn_(spec.name, spec.stderr_log) {
  if (spec.command.empty()) throw McpError("server '" + spec.name + "': no command to run");
  const auto path_it = spec.env.find("PATH");
  const char* our_path = std::getenv("PATH");
  const std::string path_env = path_it != spec.env.end() ? path_it->second : our_path ? our_path : "";
  const auto exe = find_executable(spec.command[0], path_env, spec.cwd);
  if (!exe) throw McpError("server '" + spec.name + "': command '" + spec.command[0] + "' not found");
  // With a log, stderr comes through us (pump_stderr) so the log stays capped; without, it is discarded.
  spawn_ = {*exe, spec.command, spec.env, spec.cwd, "", !spec.stderr_log.empty()};
}

StdioTransport::~StdioTransport() { close(); }

void StdioTransport::start(MessageHandler on_message, CloseHandler on_close) {
  on_message_ = std::move(on_message);
  on_close_ = std::move(on_close);
  if (::pipe2(wake_, O_CLOEXEC) != 0) throw McpError("server '" + spec_.name + "': pipe2 failed");
  interrupt_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (interrupt_fd_ < 0) throw McpError("server '" + spec_.name + "': eventfd failed");
  try {
    child_ = std::make_unique<ChildProcess>(spawn_);
  } catch (const std::system_error& e) {
    throw McpError("server '" + spec_.name + "': " + e.what());
  }
  stderr_fd_ = child_->stderr_fd();
  // The leader waits on one epoll set registered here once: a round then costs no registration on each
  // descriptor (ppoll's), only the wait. Level-triggered: what a round leaves unread wakes the next.
  epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
  if (epoll_fd_ < 0) throw McpError("server '" + spec_.name + "': epoll_create1 failed");
  for (const auto& [fd, tag] : {std::pair{child_->stdout_fd(), kStdoutTag}, std::pair{stderr_fd_, kStderrTag},
                               std::pair{wake_[0], kWakeTag}, std::pair{interrupt_fd_, kInterruptTag}}) {
    if (fd < 0) continue;  // stderr not piped
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u32 = tag;
    if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) != 0)
      throw McpError("server '" + spec_.name + "': epoll_ctl failed");
  }
  background_ = std::thread([this] { background_loop(); });
}

void StdioTransport::send(const json& message, std::chrono::milliseconds timeout) {
  std::string line = message.dump(-1, ' ', false, json::error_handler_t::replace);
  line += '\n';
  const auto written = child_ ? child_->write_stdin(line, timeout) : ChildProcess::WriteResult::closed;
  if (written == ChildProcess::WriteResult::timed_out) {
    throw TimeoutError("server '" + spec_.name + "': could not write to the server's stdin within " +
                       std::to_string(timeout.count()) + " ms (it does not read it); closed it");
  }
  if (written == ChildProcess::WriteResult::closed) {
    throw McpError("server '" + spec_.name + "': cannot write to the server's stdin (it has exited or closed it)");
  }
}

void StdioTransport::read_until(const std::function<bool()>& done, std::chrono::steady_clock::time_point deadline) {
  std::unique_lock lock(read_mu_);
  ++callers_;
  try {
    while (!over_ && !done() && std::chrono::steady_clock::now() < deadline) {
      if (!leading_) {
        ++caller_rounds_;
        lead_one_round(lock, deadline);
        continue;
      }
      if (background_leads_) interrupt_leader();  // it steps aside for us
      followers_.wait_until(lock, deadline);
    }
  } catch (...) {  // a message handler threw (out of memory): the caller gets the exception
    --callers_;
    throw;
  }
  --callers_;
}

void StdioTransport::close() noexcept {
  if (closed_) return;
  closed_ = true;
  {
    // A caller whose request the session has just failed stops waiting now, not after stop(). The
    // background reader keeps reading meanwhile: a server that writes as it exits is not blocked.
    std::lock_guard lock(read_mu_);
    if (leading_) interrupt_leader();
    followers_.notify_all();
  }
  if (child_) child_->stop(kStopGrace);
  if (wake_[1] >= 0) {
    const char byte = 1;
    [[maybe_unused]] const ssize_t n = ::write(wake_[1], &byte, 1);  // cannot fail: ours, empty
  }
  {
    std::unique_lock lock(read_mu_);
    over_ = true;
    idle_.notify_all();
    followers_.notify_all();
    followers_.wait(lock, [&] { return !leading_; });  // no handler runs after close() returns
  }
  if (background_.joinable()) background_.join();
  for (int fd : {wake_[0], wake_[1], interrupt_fd_, epoll_fd_}) {
    if (fd >= 0) ::close(fd);
  }
}

void StdioTransport::lead_one_round(std::unique_lock<std::mutex>& lock,
                                    std::optional<std::chrono::steady_clock::time_point> deadline) {
  leading_ = true;
  lock.unlock();
  Round round = Round::over;
  try {
    round = read_round(deadline);
  } catch (...) {
    lock.lock();
    leading_ = false;
    followers_.notify_all();
    throw;
  }
  lock.lock();
  leading_ = false;
  if (interrupted_) {
    uint64_t count;
    [[maybe_unused]] const ssize_t n = ::read(interrupt_fd_, &count, sizeof count);  // resets it
    interrupted_ = false;
  }
  if (round == Round::over) over_ = true;
  followers_.notify_all();
}

void StdioTransport::interrupt_leader() {
  if (interrupted_) return;
  interrupted_ = true;
  const uint64_t one = 1;
  [[maybe_unused]] const ssize_t n = ::write(interrupt_fd_, &one, sizeof one);  // cannot fail: far from full
}

void StdioTransport::background_loop() {
  std::unique_lock lock(read_mu_);
  uint64_t seen = caller_rounds_;
  while (!over_) {
    if (leading_ || callers_ > 0 || caller_rounds_ != seen) {
      seen = caller_rounds_;
      idle_.wait_for(lock, kIdleHandover);
      continue;
    }
    background_leads_ = true;
    lead_one_round(lock, std::nullopt);
    background_leads_ = false;
  }
}

StdioTransport::Round StdioTransport::read_round(std::optional<std::chrono::steady_clock::time_point> deadline) {
  // Milliseconds rounded up: a round never ends before the deadline only to start another.
  int timeout_ms = -1;
  if (deadline) {
    const auto ns = std::chrono::nanoseconds(*deadline - std::chrono::steady_clock::now()).count();
    timeout_ms = static_cast<int>(std::clamp<int64_t>((ns + 999999) / 1000000, 0, INT_MAX));
  }
  epoll_event events[4];
  const int ready = ::epoll_wait(epoll_fd_, events, 4, timeout_ms);
  if (ready < 0 && errno != EINTR) {
    stdout_ended();
    return Round::over;
  }
  bool out = false, err = false;
  for (int i = 0; i < ready; ++i) {
    if (events[i].data.u32 == kWakeTag) return Round::over;  // close() took over: no handler runs after it
    out |= events[i].data.u32 == kStdoutTag;
    err |= events[i].data.u32 == kStderrTag;
  }
  if (err && !pump_stderr(stderr_fd_)) {
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, stderr_fd_, nullptr);  // it ended: a hung-up pipe stays ready
    stderr_fd_ = -1;
  }
  if (!out) return Round::nothing;
  char chunk[kChunk];
  const ssize_t n = ::read(child_->stdout_fd(), chunk, sizeof chunk);
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return Round::nothing;
  if (n <= 0) {
    stdout_ended();
    return Round::over;
  }
  buffer_.append(chunk, static_cast<size_t>(n));
  size_t start = 0;
  for (size_t nl; (nl = buffer_.find('\n', scanned_)) != std::string::npos; scanned_ = start = nl + 1) {
    handle_line(std::string_view(buffer_).substr(start, nl - start));
  }
  buffer_.erase(0, start);
  scanned_ = buffer_.size();
  if (buffer_.size() > jsonrpc::kMaxMessageBytes) {
    on_close_("server '" + spec_.name + "': sent a stdout line longer than " +
              std::to_string(jsonrpc::kMaxMessageBytes >> 20) + " MiB; closed the connection");
    return Round::over;  // the server is stopped at close()
  }
  return Round::read;
}

void StdioTransport::stdout_ended() {
  const auto status = child_->wait_for(kExitStatusWait);
  // What it wrote to stderr before exiting explains the exit: copy it, for a bounded time (a process it
  // left behind may keep writing).
  const auto drain_until = std::chrono::steady_clock::now() + kStderrDrain;
  for (pollfd drain[2] = {{stderr_fd_, POLLIN, 0}, {wake_[0], POLLIN, 0}};
       drain[0].fd >= 0 && std::chrono::steady_clock::now() < drain_until;) {
    if (::poll(drain, 2, static_cast<int>(kStderrDrain.count())) <= 0) break;
    if (drain[1].revents) return;
    if (!pump_stderr(drain[0].fd)) break;
  }
  on_close_("server '" + spec_.name + "': " +
            (status ? ChildProcess::describe(*status) : std::string("closed its stdout")));
}

bool StdioTransport::pump_stderr(int fd) {
  char chunk[kChunk];
  ssize_t n;
  do n = ::read(fd, chunk, sizeof chunk);
  while (n < 0 && errno == EINTR);
  if (n <= 0) return false;
  append_to_server_log(spec_.stderr_log, spec_.name, std::string_view(chunk, static_cast<size_t>(n)));
  return true;
}

void StdioTransport::handle_line(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.find_first_not_of(" \t") == std::string_view::npos) return;
  std::string problem;
  if (auto message = jsonrpc::parse_message(line, problem)) on_message_(std::move(*message));
  else warn_("skipping a stdout line that " + problem);
}

}  // namespace mlsb::mcp
