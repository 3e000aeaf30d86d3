#include "util/json_parse.hpp"

#include <stdexcept>
#include <string>

namespace mlsb {

nlohmann::json parse_json_limited(std::string_view text, int max_depth) {
  // The callback sees each value's depth as the parser (iterative) reaches it; refusing early keeps
  // both the parse and every later recursive copy or destruction of the value bounded.
  nlohmann::json::parser_callback_t depth_guard = [max_depth](int depth, nlohmann::json::parse_event_t event,
                                                              nlohmann::json&) {
    if ((event == nlohmann::json::parse_event_t::object_start ||
         event == nlohmann::json::parse_event_t::array_start) &&
        depth >= max_depth)
      throw std::length_error("JSON nesting deeper than " + std::to_string(max_depth) + " levels");
    return true;
  };
  return nlohmann::json::parse(text, depth_guard);
}

std::string json_syntax_error(const nlohmann::json::parse_error& e) {
  std::string why = e.what();
  if (const size_t at = why.find("parse error"); at != std::string::npos)
    if (const size_t colon = why.find(": ", at); colon != std::string::npos) why.erase(0, colon + 2);
  if (const size_t last = why.find("; last read:"); last != std::string::npos) why.resize(last);
  return why;
}

std::string json_string(const nlohmann::json& j, const char* key) {
  if (!j.is_object()) return "";
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace mlsb
