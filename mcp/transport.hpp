#pragma once
// The byte-moving half of an MCP connection: delivers whole JSON-RPC messages both ways.
#include <chrono>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

namespace mlsb::mcp {

class Transport {
 public:
  /// Receives each incoming message (any thread; a JSON array is delivered as one message).
  using MessageHandler = std::function<void(nlohmann::json)>;
  /// Called once when the connection ends on its own (server exit, stream end), with a message that names
  /// the server and what happened.
  using CloseHandler = std::function<void(const std::string& reason)>;

  virtual ~Transport() = default;
  /// Connects (spawns, opens streams) and starts delivering. Called once, before send(). Throws McpError.
  virtual void start(MessageHandler on_message, CloseHandler on_close) = 0;
  /// Sends one message. A transport whose replies come back on the same exchange (HTTP) may deliver them
  /// to the MessageHandler before returning. `timeout` bounds that exchange. Throws McpError, TimeoutError.
  virtual void send(const nlohmann::json& message, std::chrono::milliseconds timeout) = 0;
  /// Called by a thread that waits for a reply, until `done()` holds or `deadline` passes. A transport
  /// that can read on the calling thread (stdio) delivers incoming messages here, so that a reply
  /// completes its request without a hand-off between threads; it returns when done() holds, the
  /// deadline passed or the connection is over. The default returns at once: another thread delivers.
  /// `done` must not call into the transport.
  virtual void read_until(const std::function<bool()>& /*done*/, std::chrono::steady_clock::time_point /*deadline*/) {}
  /// Tells the transport the negotiated protocol version (HTTP sends it as MCP-Protocol-Version).
  virtual void set_protocol_version(const std::string& /*version*/) {}
  /// Opens the channel on which the server sends requests and notifications outside any exchange of
  /// ours (Streamable HTTP: the standalone GET stream). Called once, after initialization; stdio and the
  /// legacy SSE transport have it already and do nothing.
  virtual void listen() {}
  /// Ends the connection; no handler runs after it returns. Idempotent, never throws.
  virtual void close() noexcept = 0;
};

}  // namespace mlsb::mcp
