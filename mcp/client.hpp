#pragma once
// MCP client: lifecycle (initialize with version negotiation), tools/list, tools/call, ping, shutdown,
// over a Transport (stdio, Streamable HTTP, legacy HTTP+SSE). Spec: modelcontextprotocol.io/specification.
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace mlsb::mcp {

/// Transport or protocol failure (server did not start, died, timed out, sent garbage). The message
/// names the server and what happened.
struct McpError : std::runtime_error { using std::runtime_error::runtime_error; };
/// A request timed out (no reply within the timeout).
struct TimeoutError : McpError { using McpError::McpError; };
/// The server answered a request with a JSON-RPC error object.
struct RpcError : McpError {
  RpcError(int code, std::string message, nlohmann::json data);
  int code;
  nlohmann::json data;
};

/// How to reach one server: either `command` (stdio; argv[0] looked up on PATH, no shell) or `url`
/// (Streamable HTTP; or legacy HTTP+SSE when `transport` is "sse").
struct ServerSpec {
  std::string name;                          ///< used in messages and log names
  std::vector<std::string> command;          ///< argv, for stdio
  std::map<std::string, std::string> env;    ///< added to the inherited environment
  std::string cwd;                           ///< working directory of the spawned server ("" = ours)
  std::string url;                           ///< for HTTP transports
  std::string transport;                     ///< "stdio" | "http" | "sse"; "" = stdio if command else http
  std::map<std::string, std::string> headers;///< extra HTTP headers
  std::string stderr_log;                    ///< file receiving the server's stderr ("" = discard)
};

struct ClientOptions {
  std::chrono::milliseconds request_timeout{30000};  ///< each request after the handshake (tools/list, tools/call, ping)
  std::chrono::milliseconds connect_timeout{30000};  ///< the initialize handshake (includes the server's start-up)
  std::string client_name = "mlsysbench";
  std::string client_version = "0.1.0";
  /// When set, the client declares the `elicitation` capability and answers the server's
  /// elicitation/create requests with on_elicitation(params) (e.g. accept_with_defaults, elicitation.hpp);
  /// unset, such requests get -32601.
  std::function<nlohmann::json(const nlohmann::json& params)> on_elicitation;
};

/// A tool as the server lists it.
struct ToolInfo {
  std::string name;
  std::string description;
  nlohmann::json input_schema;  ///< the MCP `inputSchema`
};

/// Result of tools/call. `content` is the array of content blocks; `is_error` is the result's isError.
struct CallResult {
  nlohmann::json content = nlohmann::json::array();
  bool is_error = false;
  nlohmann::json structured;  ///< structuredContent when present, else null
  /// Concatenated text of the text content blocks, one '\n' between blocks (for excerpts and scoring).
  std::string text() const;
};

/// Newest first; the client offers the first and accepts any of these the server answers with.
const std::vector<std::string>& supported_protocol_versions();

class Transport;

class Client {
 public:
  /// Connects (spawning the server for stdio) and runs the initialize handshake.
  /// Throws McpError (e.g. "server 'fs': command 'nope' not found"), TimeoutError, RpcError.
  static std::unique_ptr<Client> connect(const ServerSpec& spec, const ClientOptions& options = {});
  /// The same over a transport made by the caller (tests, custom transports); `spec` supplies only the name
  /// and the stderr_log that receives warnings.
  static std::unique_ptr<Client> connect(std::unique_ptr<Transport> transport, const ServerSpec& spec,
                                         const ClientOptions& options = {});
  virtual ~Client() = default;

  virtual const std::string& protocol_version() const = 0;  ///< negotiated version
  virtual const nlohmann::json& server_info() const = 0;    ///< initialize result's serverInfo
  virtual std::vector<ToolInfo> list_tools() = 0;            ///< follows nextCursor pagination
  /// Calls a tool. A tool-level failure is a CallResult with is_error; a protocol failure throws.
  virtual CallResult call_tool(const std::string& name, const nlohmann::json& arguments) = 0;
  virtual void ping() = 0;
  /// Closes the session (stdio: close stdin, wait, then SIGTERM/SIGKILL). Idempotent; the destructor calls it.
  virtual void close() = 0;
};

}  // namespace mlsb::mcp
