#pragma once
// MCP stdio transport: the server is a child process (in a process group of its own); messages are
// newline-delimited JSON on its stdin/stdout; its stderr is pumped through us into its capped log file.
// Reading is leader/follower: a caller waiting for a reply reads the server's output itself (one
// wake-up per reply, none of another thread); a background reader takes over when no caller has read
// for a while, so server requests, stderr and the server's exit are handled between calls too.
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "mcp/child_process.hpp"
#include "mcp/client.hpp"
#include "mcp/transport.hpp"
#include "mcp/warnings.hpp"

namespace mlsb::mcp {

class StdioTransport final : public Transport {
 public:
  /// Resolves the command now: throws McpError "server 'NAME': command 'X' not found" when it does not
  /// exist (see find_executable), McpError when `spec.command` is empty.
  explicit StdioTransport(const ServerSpec& spec);
  ~StdioTransport() override;

  /// Spawns the server and starts the background reader. Throws McpError when spawning fails.
  void start(MessageHandler on_message, CloseHandler on_close) override;
  /// Writes one line within `timeout`. Throws McpError naming the server when it no longer reads its
  /// stdin, TimeoutError when it does not take the line in time (its stdin is closed then: the stream is
  /// broken).
  void send(const nlohmann::json& message, std::chrono::milliseconds timeout) override;
  /// Reads and delivers the server's output on the calling thread while no other thread does (the
  /// leader); otherwise sleeps until the leader has read something, then looks again (a follower).
  void read_until(const std::function<bool()>& done, std::chrono::steady_clock::time_point deadline) override;
  /// Stops the server's whole process group (see ChildProcess::stop), waits for the thread reading, if
  /// any, and stops the background reader.
  void close() noexcept override;

 private:
  /// What one round of reading did: delivered stdout lines; nothing (timed out, stderr only, or
  /// interrupted); or the stream is over (stdout ended or overflowed: on_close_ has run; or close()).
  enum class Round { read, nothing, over };
  /// Leads one round with `lock` (on read_mu_, held by the caller) released meanwhile: waits until
  /// `deadline` (none: forever) for the server's stdout or stderr, an interrupt or close() (epoll_fd_); reads one
  /// chunk and delivers its whole lines. Then ends the leadership and wakes the followers.
  void lead_one_round(std::unique_lock<std::mutex>& lock,
                      std::optional<std::chrono::steady_clock::time_point> deadline);
  /// The round itself, on the leader's thread, without read_mu_.
  Round read_round(std::optional<std::chrono::steady_clock::time_point> deadline);
  /// Makes the leader's poll() return so that it looks at its situation again (read_mu_ held).
  void interrupt_leader();
  /// The background reader: leads while no caller has read for kIdleHandover, until a caller asks to.
  void background_loop();
  /// After stdout ended: the server's exit status and last stderr, then on_close_.
  void stdout_ended();
  void handle_line(std::string_view line);
  /// Reads one chunk of the server's stderr into its log (append_to_server_log). False at end or error.
  bool pump_stderr(int fd);

  ServerSpec spec_;
  SpawnOptions spawn_;
  WarningSink warn_;
  std::unique_ptr<ChildProcess> child_;
  MessageHandler on_message_;
  CloseHandler on_close_;
  int wake_[2] = {-1, -1};  ///< a pipe that interrupts every poll() for good at close
  int interrupt_fd_ = -1;   ///< an eventfd that ends the leader's current round (interrupt_leader())
  int epoll_fd_ = -1;       ///< what the leader waits on: stdout, stderr (when piped), wake_[0], interrupt_fd_
  std::thread background_;
  bool closed_ = false;

  std::mutex read_mu_;                 ///< guards the members up to caller_rounds_
  std::condition_variable followers_;  ///< callers waiting for the leader's round (and close() for its end)
  std::condition_variable idle_;       ///< the background reader's timed sleep, cut short by close()
  bool leading_ = false;               ///< a thread is in read_round()
  bool background_leads_ = false;      ///< ... and it is the background reader
  bool interrupted_ = false;           ///< interrupt_fd_ is signalled (the leader clears it after its round)
  bool over_ = false;                  ///< no more rounds: stdout ended, or close() ends the reading
  int callers_ = 0;                    ///< threads in read_until()
  uint64_t caller_rounds_ = 0;         ///< rounds led by callers so far

  // The leader's own state (read_mu_ hands it from one leader to the next).
  std::string buffer_;  ///< stdout bytes after the last whole line
  size_t scanned_ = 0;  ///< bytes of buffer_ known to hold no newline
  int stderr_fd_ = -1;  ///< the server's stderr until it ends (-1: not piped, or ended)
};

}  // namespace mlsb::mcp
