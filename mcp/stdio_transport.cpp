#include "mcp/stdio_transport.hpp"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

#include "mcp/command_lookup.hpp"
#include "mcp/jsonrpc.hpp"

namespace mlsb::mcp {

using nlohmann::json;

namespace {
constexpr auto kStopGrace = std::chrono::milliseconds(1000);
constexpr auto kExitStatusWait = std::chrono::milliseconds(500);
constexpr auto kStderrDrain = std::chrono::milliseconds(100);
constexpr size_t kChunk = 65536;
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
  try {
    child_ = std::make_unique<ChildProcess>(spawn_);
  } catch (const std::system_error& e) {
    throw McpError("server '" + spec_.name + "': " + e.what());
  }
  reader_ = std::thread([this] { read_loop(); });
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

void StdioTransport::close() noexcept {
  if (closed_) return;
  closed_ = true;
  if (child_) child_->stop(kStopGrace);
  if (reader_.joinable()) {
    const char byte = 1;
    [[maybe_unused]] const ssize_t n = ::write(wake_[1], &byte, 1);  // cannot fail: ours, empty
    reader_.join();
  }
  for (int fd : wake_) {
    if (fd >= 0) ::close(fd);
  }
}

void StdioTransport::read_loop() {
  std::string buffer;
  size_t scanned = 0;  // bytes of `buffer` known to hold no newline
  char chunk[kChunk];
  // poll() skips a negative descriptor: stderr when it is not piped, or once it has ended.
  pollfd fds[3] = {{child_->stdout_fd(), POLLIN, 0}, {child_->stderr_fd(), POLLIN, 0}, {wake_[0], POLLIN, 0}};
  while (true) {
    if (::poll(fds, 3, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (fds[2].revents) return;  // close() took over: no handler runs after it
    if (fds[1].revents && !pump_stderr(fds[1].fd)) fds[1].fd = -1;
    if (!fds[0].revents) continue;
    const ssize_t n = ::read(fds[0].fd, chunk, sizeof chunk);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) break;
    buffer.append(chunk, static_cast<size_t>(n));
    size_t start = 0;
    for (size_t nl; (nl = buffer.find('\n', scanned)) != std::string::npos; scanned = start = nl + 1) {
      handle_line(std::string_view(buffer).substr(start, nl - start));
    }
    buffer.erase(0, start);
    scanned = buffer.size();
    if (buffer.size() > jsonrpc::kMaxMessageBytes) {
      on_close_("server '" + spec_.name + "': sent a stdout line longer than " +
                std::to_string(jsonrpc::kMaxMessageBytes >> 20) + " MiB; closed the connection");
      return;  // the server is stopped at close()
    }
  }
  const auto status = child_->wait_for(kExitStatusWait);
  // What it wrote to stderr before exiting explains the exit: copy it, for a bounded time (a process it
  // left behind may keep writing).
  const auto drain_until = std::chrono::steady_clock::now() + kStderrDrain;
  for (pollfd drain[2] = {fds[1], fds[2]}; drain[0].fd >= 0 && std::chrono::steady_clock::now() < drain_until;) {
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
