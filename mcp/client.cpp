#include "mcp/client.hpp"

#include <algorithm>
#include <set>

#include "mcp/jsonrpc.hpp"
#include "mcp/rpc_session.hpp"
#include "mcp/transport_factory.hpp"

namespace mlsb::mcp {

using nlohmann::json;

const std::vector<std::string>& supported_protocol_versions() {
  static const std::vector<std::string> versions = {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"};
  return versions;
}

std::string CallResult::text() const {
  std::string out;
  for (const auto& block : content) {
    if (!block.is_object() || block.value("type", json()) != "text") continue;
    const auto text = block.find("text");
    if (!out.empty()) out += '\n';
    if (text != block.end() && text->is_string()) out += text->get_ref<const std::string&>();
  }
  return out;
}

namespace {

class SessionClient final : public Client {
 public:
  SessionClient(std::unique_ptr<Transport> transport, const ServerSpec& spec, const ClientOptions& options)
      : options_(options),
        name_(spec.name),
        session_(std::move(transport), WarningSink(spec.name, spec.stderr_log), handlers(options)) {
    initialize();
  }
  ~SessionClient() override { close(); }

  const std::string& protocol_version() const override { return protocol_version_; }
  const json& server_info() const override { return server_info_; }

  std::vector<ToolInfo> list_tools() override {
    std::vector<ToolInfo> tools;
    std::set<std::string> seen_cursors;
    json params = json::object();
    while (true) {
      const json result = request("tools/list", params);
      const json tool_list = result.value("tools", json::array());
      if (!tool_list.is_array()) malformed("tools/list", "`tools` is not an array", result);
      for (const auto& t : tool_list) {
        const auto name = t.is_object() ? t.find("name") : t.end();
        if (name == t.end() || !name->is_string()) malformed("tools/list", "a tool has no string `name`", t);
        const json description = t.value("description", json(""));
        if (!description.is_string()) malformed("tools/list", "a tool's `description` is not a string", t);
        const json schema = t.value("inputSchema", json::object());
        if (!schema.is_object()) malformed("tools/list", "a tool's `inputSchema` is not an object", t);
        tools.push_back({name->get<std::string>(), description.get<std::string>(), schema});
      }
      const auto cursor = result.find("nextCursor");
      if (cursor == result.end() || !cursor->is_string()) return tools;
      if (!seen_cursors.insert(cursor->get<std::string>()).second) {
        throw McpError("server '" + name_ + "': tools/list repeated the cursor " + cursor->dump());
      }
      params["cursor"] = *cursor;
    }
  }

  CallResult call_tool(const std::string& name, const json& arguments) override {
    json result = request("tools/call", {{"name", name}, {"arguments", arguments}});
    CallResult r;
    if (const auto c = result.find("content"); c != result.end() && c->is_array()) r.content = std::move(*c);
    if (const auto e = result.find("isError"); e != result.end() && e->is_boolean()) r.is_error = e->get<bool>();
    if (const auto s = result.find("structuredContent"); s != result.end()) r.structured = std::move(*s);
    return r;
  }

  void ping() override { request("ping", nullptr); }

  void close() override { session_.close(); }

 private:
  static std::map<std::string, RpcSession::RequestHandler> handlers(const ClientOptions& options) {
    if (!options.on_elicitation) return {};
    return {{"elicitation/create", options.on_elicitation}};
  }

  /// The `result` of a request; throws McpError (malformed()) when it is not an object.
  json request(const std::string& method, json params) {
    return request(method, std::move(params), options_.request_timeout);
  }
  json request(const std::string& method, json params, std::chrono::milliseconds timeout) {
    json result = session_.request(method, std::move(params), timeout);
    if (!result.is_object()) malformed(method, "the result is not an object", result);
    return result;
  }

  /// Throws McpError "server 'NAME': malformed METHOD result: PROBLEM: <excerpt of `value`>".
  [[noreturn]] void malformed(const std::string& method, const std::string& problem, const json& value) const {
    throw McpError("server '" + name_ + "': malformed " + method + " result: " + problem + ": " +
                   jsonrpc::dump_excerpt(value));
  }

  void initialize() {
    const auto& versions = supported_protocol_versions();
    const json capabilities = options_.on_elicitation ? json{{"elicitation", json::object()}} : json::object();
    const json result = request("initialize", {{"protocolVersion", versions.front()},
                                               {"capabilities", capabilities},
                                               {"clientInfo", {{"name", options_.client_name},
                                                               {"version", options_.client_version}}}},
                                options_.connect_timeout);
    const auto answered = result.find("protocolVersion");
    const std::string version = answered != result.end() && answered->is_string() ? answered->get<std::string>() : "";
    if (std::find(versions.begin(), versions.end(), version) == versions.end()) {
      std::string list;
      for (const auto& v : versions) list += (list.empty() ? "" : ", ") + v;
      throw McpError("server '" + name_ + "': answered protocol version '" + version + "' to our offer of '" +
                     versions.front() + "'; this client supports " + list);
    }
    protocol_version_ = version;
    server_info_ = result.value("serverInfo", json::object());
    session_.transport().set_protocol_version(version);
    session_.notify("notifications/initialized", nullptr, options_.connect_timeout);
    if (options_.on_elicitation) session_.transport().listen();  // where such requests may come
  }

  ClientOptions options_;
  std::string name_;
  RpcSession session_;
  std::string protocol_version_;
  json server_info_;
};

}  // namespace

std::unique_ptr<Client> Client::connect(const ServerSpec& spec, const ClientOptions& options) {
  return connect(make_transport(spec), spec, options);
}

std::unique_ptr<Client> Client::connect(std::unique_ptr<Transport> transport, const ServerSpec& spec,
                                        const ClientOptions& options) {
  return std::make_unique<SessionClient>(std::move(transport), spec, options);
}

}  // namespace mlsb::mcp
