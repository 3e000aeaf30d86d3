#pragma once
// An MCP server's protocol half: the lifecycle (initialize with version negotiation, initialized,
// ping) and the tools capability (tools/list, tools/call) over tools given as handlers. Transports
// (stdio_server.hpp, http_server.hpp) move its messages. Spec: modelcontextprotocol.io/specification
// (2025-11-25 and the versions the client supports, client.hpp).
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace mlsb::mcp {

/// Thrown by a tool handler for a failure the calling agent should see and may correct (bad
/// arguments, an unknown run): the result carries isError and the message. Any other exception is
/// reported the same way, prefixed with "internal error: ".
struct ToolError : std::runtime_error { using std::runtime_error::runtime_error; };

/// A tool: its name, description and JSON-Schema `inputSchema` (an object schema), and the handler
/// that takes the call's `arguments` (an object) and returns the result's structured content; the
/// result's text block is that JSON, pretty-printed, unless the handler gives `text`.
struct ServerTool {
  struct Output {
    nlohmann::json structured = nlohmann::json::object();  ///< structuredContent (an object)
    std::string text;                                      ///< "" = structured, dumped
  };
  std::string name;
  std::string description;
  nlohmann::json input_schema;
  std::function<Output(const nlohmann::json& arguments)> handler;
};

class ToolServer {
 public:
  ToolServer(std::string name, std::string version, std::vector<ServerTool> tools);

  /// Handles one incoming message (a parsed JSON value) and returns the response to send, or nullopt
  /// for notifications and responses. Thread-safe; tools/call handlers run on the caller's thread.
  /// Errors: -32700/-32600 for what is not a JSON-RPC request, -32601 for an unknown method, -32602
  /// for an unknown tool or arguments that are not an object; tool failures are results with isError.
  std::optional<nlohmann::json> handle(const nlohmann::json& message);

  /// The protocol version this server answers an initialize offering `offered`: the same when it
  /// supports it, else its newest.
  static std::string negotiate(const std::string& offered);
  /// Whether `version` is one this server speaks (the MCP-Protocol-Version header check).
  static bool supports(const std::string& version);

 private:
  nlohmann::json call_tool(const nlohmann::json& id, const nlohmann::json& params);
  std::string name_, version_;
  std::vector<ServerTool> tools_;
};

}  // namespace mlsb::mcp
