#include "mcp/jsonrpc.hpp"

#include <stdexcept>

#include "util/json_parse.hpp"
#include "util/text.hpp"

namespace mlsb::mcp::jsonrpc {

using nlohmann::json;

json request(int64_t id, const std::string& method, json params) {
  json m = {{"jsonrpc", "2.0"}, {"id", id}, {"method", method}};
  if (!params.is_null()) m["params"] = std::move(params);
  return m;
}

json notification(const std::string& method, const json& params) {
  json m = {{"jsonrpc", "2.0"}, {"method", method}};
  if (!params.is_null()) m["params"] = params;
  return m;
}

json result(const json& id, const json& result) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"result", result}};
}

json error(const json& id, int code, const std::string& message) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", code}, {"message", message}}}};
}

std::string excerpt(std::string_view text) {
  constexpr size_t kExcerpt = 300;
  return utf8_truncate(text, kExcerpt + 3);
}

std::string dump_excerpt(const json& value) {
  return excerpt(value.dump(-1, ' ', false, json::error_handler_t::replace));
}

std::optional<json> parse_message(std::string_view text, std::string& problem) {
  try {
    return mlsb::parse_json_limited(text);
  } catch (const json::parse_error&) {
    problem = "is not JSON: " + excerpt(text);
  } catch (const std::length_error&) {
    problem = "nests JSON deeper than " + std::to_string(mlsb::kMaxJsonDepth) + " levels: " + excerpt(text);
  }
  return std::nullopt;
}

Kind classify(const json& m) {
  if (!m.is_object()) return Kind::invalid;
  const auto id = m.find("id");
  const bool has_id = id != m.end() && (id->is_number_integer() || id->is_string() || id->is_null());
  if (const auto method = m.find("method"); method != m.end()) {
    if (!method->is_string()) return Kind::invalid;
    return id == m.end() ? Kind::notification : has_id ? Kind::request : Kind::invalid;
  }
  if (has_id && (m.contains("result") || m.contains("error"))) return Kind::response;
  return Kind::invalid;
}

}  // namespace mlsb::mcp::jsonrpc
