#include "util/json_parse.hpp"

#include <stdexcept>
#include <string>

namespace mlsb {

nlohmann::json parse_json_limited(std::string_view text, int max_depth) {
  // The nesting is checked before parsing, in one pass over the bytes (brackets outside strings), so
  // that both the parse and every later recursive copy or destruction of the value stay bounded; the
  // parse itself is then nlohmann's plain one (its callback parser costs a std::function call and a
  // keep-stack push per value).
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth)
        throw std::length_error("JSON nesting deeper than " + std::to_string(max_depth) + " levels");
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return nlohmann::json::parse(text);
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
