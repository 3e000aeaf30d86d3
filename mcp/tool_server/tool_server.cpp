#include "mcp/tool_server/tool_server.hpp"

#include <algorithm>

#include "util/json_parse.hpp"
#include "mcp/client.hpp"
#include "mcp/jsonrpc.hpp"

namespace mlsb::mcp {

using nlohmann::json;

ToolServer::ToolServer(std::string name, std::string version, std::vector<ServerTool> tools)
    : name_(std::move(name)), version_(std::move(version)), tools_(std::move(tools)) {}

bool ToolServer::supports(const std::string& version) {
  const auto& v = supported_protocol_versions();
  return std::find(v.begin(), v.end(), version) != v.end();
}

std::string ToolServer::negotiate(const std::string& offered) {
  return supports(offered) ? offered : supported_protocol_versions().front();
}

std::optional<json> ToolServer::handle(const json& message) {
  const jsonrpc::Kind kind = jsonrpc::classify(message);
  if (kind == jsonrpc::Kind::notification || kind == jsonrpc::Kind::response) return std::nullopt;
  if (kind == jsonrpc::Kind::invalid) {
    const json id = message.is_object() && message.contains("id") ? message["id"] : json();
    return jsonrpc::error(id, jsonrpc::kInvalidRequest, "not a JSON-RPC 2.0 request");
  }
  const json& id = message["id"];
  const std::string& method = message["method"].get_ref<const std::string&>();
  const json params = message.contains("params") ? message["params"] : json::object();
  if (method == "initialize") {
    const std::string offered = params.is_object() ? params.value("protocolVersion", "") : "";
    return jsonrpc::result(id, {{"protocolVersion", negotiate(offered)},
                                {"capabilities", {{"tools", {{"listChanged", false}}}}},
                                {"serverInfo", {{"name", name_}, {"version", version_}}}});
  }
  if (method == "ping") return jsonrpc::result(id, json::object());
  if (method == "tools/list") {
    json tools = json::array();
    for (const auto& t : tools_)
      tools.push_back({{"name", t.name}, {"description", t.description}, {"inputSchema", t.input_schema}});
    return jsonrpc::result(id, {{"tools", std::move(tools)}});
  }
  if (method == "tools/call") return call_tool(id, params);
  return jsonrpc::error(id, jsonrpc::kMethodNotFound, "Method not found: " + method);
}

json ToolServer::call_tool(const json& id, const json& params) {
  const std::string name = params.is_object() && params.contains("name") && params["name"].is_string()
                               ? params["name"].get<std::string>()
                               : "";
  const auto tool = std::find_if(tools_.begin(), tools_.end(), [&](const ServerTool& t) { return t.name == name; });
  if (tool == tools_.end()) return jsonrpc::error(id, jsonrpc::kInvalidParams, "Unknown tool: '" + name + "'");
  const json arguments = params.contains("arguments") && !params["arguments"].is_null() ? params["arguments"] : json::object();
  if (!arguments.is_object()) return jsonrpc::error(id, jsonrpc::kInvalidParams, "tools/call arguments must be an object");
  std::string failure;
  try {
    ServerTool::Output out = tool->handler(arguments);
    const std::string text = out.text.empty() ? dump_json(out.structured, 2) : out.text;
    return jsonrpc::result(id, {{"content", {{{"type", "text"}, {"text", text}}}},
                                {"structuredContent", std::move(out.structured)},
                                {"isError", false}});
  } catch (const ToolError& e) {
    failure = e.what();
  } catch (const std::exception& e) {
    failure = std::string("internal error: ") + e.what();
  }
  return jsonrpc::result(id, {{"content", {{{"type", "text"}, {"text", failure}}}}, {"isError", true}});
}

}  // namespace mlsb::mcp
