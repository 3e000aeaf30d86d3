#pragma once
// The legacy MCP HTTP+SSE transport (spec 2024-11-05): a GET opens an SSE stream whose first `endpoint`
// event names the URL to POST messages to; every reply arrives as a `message` event on that stream.
#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "mcp/client.hpp"
#include "mcp/curl_handle.hpp"
#include "mcp/transport.hpp"
#include "mcp/warnings.hpp"

namespace mlsb::mcp {

class SseTransport final : public Transport {
 public:
  explicit SseTransport(const ServerSpec& spec);
  ~SseTransport() override;

  /// Opens the stream and waits (up to 10 s) for the `endpoint` event. Throws McpError.
  void start(MessageHandler on_message, CloseHandler on_close) override;
  /// POSTs one message to the endpoint; its reply comes on the stream. Throws McpError (HTTP status >= 400,
  /// connection failure), TimeoutError.
  void send(const nlohmann::json& message, std::chrono::milliseconds timeout) override;
  void close() noexcept override;

 private:
  void stream_loop();
  void on_event(const struct SseEvent& event);

  ServerSpec spec_;
  WarningSink warn_;
  MessageHandler on_message_;
  CloseHandler on_close_;
  CURLM* multi_ = nullptr;
  std::thread stream_;
  std::mutex mu_;  ///< guards the four below
  std::condition_variable cv_;
  std::string endpoint_;                 ///< absolute URL from the `endpoint` event
  std::optional<std::string> ended_;     ///< why the stream ended, once it has
  bool stop_ = false;
  std::mutex post_mu_;  ///< guards post_
  CurlEasy post_;
};

}  // namespace mlsb::mcp
