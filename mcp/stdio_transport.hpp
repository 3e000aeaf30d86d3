#pragma once
// MCP stdio transport: the server is a child process (in a process group of its own); messages are
// newline-delimited JSON on its stdin/stdout; its stderr is pumped through us into its capped log file.
#include <memory>
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

  /// Spawns the server and starts the reader thread. Throws McpError when spawning fails.
  void start(MessageHandler on_message, CloseHandler on_close) override;
  /// Writes one line within `timeout`. Throws McpError naming the server when it no longer reads its
  /// stdin, TimeoutError when it does not take the line in time (its stdin is closed then: the stream is
  /// broken).
  void send(const nlohmann::json& message, std::chrono::milliseconds timeout) override;
  /// Stops the server's whole process group (see ChildProcess::stop) and the reader thread.
  void close() noexcept override;

 private:
  /// Reads stdout (lines to handle_line) and stderr (to the log) until stdout ends, a line grows past
  /// jsonrpc::kMaxMessageBytes (that ends the connection), or close().
  void read_loop();
  void handle_line(std::string_view line);
  /// Reads one chunk of the server's stderr into its log (append_to_server_log). False at end or error.
  bool pump_stderr(int fd);

  ServerSpec spec_;
  SpawnOptions spawn_;
  WarningSink warn_;
  std::unique_ptr<ChildProcess> child_;
  MessageHandler on_message_;
  CloseHandler on_close_;
  int wake_[2] = {-1, -1};  ///< a pipe that interrupts the reader's poll() at close
  std::thread reader_;
  bool closed_ = false;
};

}  // namespace mlsb::mcp
