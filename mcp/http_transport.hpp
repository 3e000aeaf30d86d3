#pragma once
// MCP Streamable HTTP transport (spec 2025-03-26 and later): each message is POSTed to one endpoint; the
// reply is a JSON body or an SSE stream; the session is named by the Mcp-Session-Id header.
#include <mutex>
#include <string>
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
  /// POSTs one message and delivers the messages of its reply before returning. Throws McpError (HTTP
  /// status >= 400, with the status and an excerpt of the body; connection failures), TimeoutError.
  void send(const nlohmann::json& message, std::chrono::milliseconds timeout) override;
  void set_protocol_version(const std::string& version) override;
  /// DELETEs the session (a 405 or any failure is ignored).
  void close() noexcept override;

 private:
  struct Exchange;
  static size_t on_header(char* data, size_t size, size_t count, void* exchange);
  static size_t on_body(char* data, size_t size, size_t count, void* exchange);
  CurlEasy acquire();
  void release(CurlEasy handle);
  void add_common_headers(CurlHeaders& headers);

  ServerSpec spec_;
  WarningSink warn_;
  MessageHandler on_message_;
  std::mutex mu_;  ///< guards everything below
  std::string session_id_, protocol_version_;
  std::vector<CurlEasy> idle_;  ///< handles keep their connections alive; a reentrant send takes another
  bool closed_ = false;
};

}  // namespace mlsb::mcp
