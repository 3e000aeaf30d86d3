#pragma once
// Serving a ToolServer over MCP Streamable HTTP (spec 2025-03-26 and later) with cpp-httplib: one
// endpoint, POST for every client message, JSON replies (no server-initiated stream).
#include <atomic>
#include <cstddef>
#include <functional>
#include <string>

#include "mcp/tool_server/tool_server.hpp"

namespace mlsb::mcp {

struct HttpServeOptions {
  std::string host = "127.0.0.1";  ///< bind address; only loopback Origins are accepted whatever it is
  int port = 0;                     ///< 0 = any free port
  std::string path = "/mcp";
  /// Largest request body (bytes) read; a larger Content-Length is answered 413 without reading it.
  size_t max_body_bytes = size_t{4} << 20;
  /// Called once listening, with the endpoint URL (e.g. to print it).
  std::function<void(const std::string& url)> on_listening;
};

/// Serves until `stop` is set (polled every 100 ms). On `path`:
///  - POST a JSON-RPC message: a request gets 200 with the JSON response; a notification or response
///    202. initialize opens a session (Mcp-Session-Id in the reply); later messages must carry a live
///    session id (400 without one, 404 for an unknown or ended one). An MCP-Protocol-Version header
///    naming a version the server does not speak is 400; a body that is not JSON is 400 with a -32700.
///  - GET: 405 (this server has nothing to send unasked). DELETE: ends the session (200; 404 unknown).
///  - A request whose Origin header is not http(s)://localhost, 127.0.0.1 or [::1] (any port), or whose
///    Host header names another host than those and the bound address, is 403 (the spec's DNS-rebinding
///    defence); both are checked before the body is read. A body over max_body_bytes is 413.
/// Returns 0 when stopped. Throws std::runtime_error when the address cannot be bound.
int serve_http(ToolServer& server, const HttpServeOptions& options, const std::atomic<bool>& stop);

}  // namespace mlsb::mcp
