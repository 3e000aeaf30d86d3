#include "workloads/toolbench/agents/tool_names.hpp"

#include <set>

namespace mlsb::toolbench {

namespace {

constexpr std::size_t kMaxName = 64;

bool valid_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

std::string valid_name(const std::string& name) {
  std::string out;
  for (char c : name) out += valid_char(c) ? c : '_';
  if (out.size() > kMaxName) out.resize(kMaxName);
  return out.empty() ? "tool" : out;
}

nlohmann::json object_schema(const nlohmann::json& schema) {
  if (!schema.is_object()) return {{"type", "object"}, {"properties", nlohmann::json::object()}};
  nlohmann::json out = schema;
  if (!out.contains("type")) out["type"] = "object";
  return out;
}

}  // namespace

std::vector<ApiTool> api_tools(const std::vector<ToolSpec>& tools) {
  std::vector<ApiTool> out;
  std::set<std::string> taken;
  for (const auto& t : tools) {
    const std::string base = valid_name(t.name);
    std::string name = base;
    for (int n = 2; taken.count(name); ++n) {
      const std::string suffix = "_" + std::to_string(n);
      name = base.substr(0, kMaxName - suffix.size()) + suffix;
    }
    taken.insert(name);
    out.push_back({name, t.name, t.description, object_schema(t.input_schema)});
  }
  return out;
}

std::string mcp_name_of(const std::vector<ApiTool>& tools, const std::string& api_name) {
  for (const auto& t : tools)
    if (t.name == api_name) return t.mcp_name;
  return api_name;
}

}  // namespace mlsb::toolbench
