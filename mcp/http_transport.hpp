#pragma once
// MCP Streamable HTTP transport (spec 2025-03-26 and later): each message is POSTed to one endpoint; the
// reply is a JSON body or an SSE stream; the session is named by the Mcp-Session-Id header.
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "mcp/client.hpp"
#include "mcp/curl_handle.hpp"
#include "mcp/transport.hpp"
#include "mcp/warnings.hpp"

namespace mlsb::mcp {

class HttpTransport final : public Transport {
 public:
  explicit HttpTransport(const ServerSpec& spec);
  ~HttpTransport() override;

  /// Stores the handlers; the first POST (initialize) opens the connection.
  void start(MessageHandler on_message, CloseHandler on_close) override;
  /// POSTs one message and delivers the messages of its reply before returning. A request whose SSE
  /// reply ends before its response is resumed as SEP-1699 asks: after the stream's `retry:` time
  /// (default 1 s), a GET with Last-Event-ID (up to 5 times, within `timeout`). Throws McpError (HTTP
  /// status >= 400, with the status and an excerpt of the body; connection failures; a stream that ends
  /// without the response and cannot be resumed), TimeoutError.
  void send(const nlohmann::json& message, std::chrono::milliseconds timeout) override;
  void set_protocol_version(const std::string& version) override;
  /// Opens the standalone SSE stream (GET with Accept: text/event-stream) on a thread of its own, waits
  /// (at most 5 s) until the server has answered it, and delivers what the server sends on it; reconnects after the stream's `retry:` time with
  /// Last-Event-ID. A 405 (the server offers none) ends it quietly; 3 failures in a row end it with a
  /// warning in the server's log.
  void listen() override;
  /// Stops the standalone stream, then DELETEs the session (a 405 or any failure is ignored).
  void close() noexcept override;

 private:
  struct Exchange;
  /// The callbacks that parse a reply into `ex` (for curl_bind).
  static CurlSinks sinks(Exchange& ex);
  /// One HTTP exchange on a pooled handle: a POST of `payload`, or a GET when it is null. Returns
  /// curl's code and, when not CURLE_OK, its message in `error`.
  CURLcode perform(Exchange& ex, const CurlHeaders& headers, const std::string* payload,
                   std::chrono::milliseconds timeout, std::string& error);
  void resume(Exchange& posted, std::chrono::steady_clock::time_point deadline);
  static size_t on_header(char* data, size_t size, size_t count, void* exchange);
  static size_t on_body(char* data, size_t size, size_t count, void* exchange);
  CurlEasy acquire();
  void release(CurlEasy handle);
  void add_common_headers(CurlHeaders& headers);
  void listen_loop();
  void stop_listening() noexcept;

  ServerSpec spec_;
  WarningSink warn_;
  MessageHandler on_message_;
  std::mutex mu_;  ///< guards everything below
  std::string session_id_, protocol_version_;
  std::vector<CurlEasy> idle_;  ///< handles keep their connections alive; a reentrant send takes another
  std::set<std::string> answered_;  ///< ids (dumped) of responses delivered to requests still in send()
  bool closed_ = false;
  // The standalone stream: its thread, the multi handle whose poll close() wakes, the stop flag.
  std::thread listener_;
  CURLM* multi_ = nullptr;
  std::atomic<bool> stop_listening_{false};
  bool listening_ = false;  ///< the first GET was answered or failed (guarded by mu_)
  std::condition_variable stop_cv_;
};

}  // namespace mlsb::mcp
