#include "workloads/toolbench/agents/chat_format.hpp"

#include <algorithm>
#include <stdexcept>

#include "util/text.hpp"

namespace mlsb::toolbench {

CallResult call_result(const std::string& call_id, const ToolOutcome& outcome) {
  CallResult r{call_id, "", !outcome.error.empty() || outcome.is_error};
  const std::string& text = outcome.error.empty() ? outcome.text : outcome.error;
  r.text = utf8_excerpt((r.is_error ? "error: " : "") + (text.empty() && r.is_error ? "the call failed" : text),
                         kMaxResultBytes);
  return r;
}

std::string endpoint_url(std::string_view base_url, std::string_view path) {
  while (base_url.ends_with('/')) base_url.remove_suffix(1);
  return std::string(base_url) + std::string(path);
}

const nlohmann::json& reply_field(const nlohmann::json& object, const char* key, const std::string& path) {
  if (!object.is_object() || !object.contains(key) || object[key].is_null())
    throw std::runtime_error("reply has no " + path);
  return object[key];
}

int64_t token_count(const nlohmann::json& usage, const char* key) {
  if (!usage.is_object() || !usage.contains(key) || !usage[key].is_number_integer()) return 0;
  return std::max<int64_t>(0, usage[key].get<int64_t>());  // a negative (or wrapped) count bills nothing
}

std::string arguments_problem(const nlohmann::json& arguments) {
  return arguments.is_object() ? "" : "arguments are not a JSON object (got " + std::string(arguments.type_name()) + ")";
}

}  // namespace mlsb::toolbench
