#pragma once
// Parsing untrusted JSON (task files, suite files, server replies) with a nesting limit, so a
// hostile or broken input gets an error instead of exhausting the stack in later recursive copies;
// and writing JSON whose strings came from outside (paths, file contents in error messages).
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace mlsb {

/// Deepest nesting of arrays/objects accepted by parse_json_limited.
inline constexpr int kMaxJsonDepth = 512;

/// Parses `text`. Throws nlohmann::json::parse_error for invalid JSON, and std::length_error
/// ("JSON nesting deeper than N levels") when arrays or objects nest deeper than `max_depth`.
nlohmann::json parse_json_limited(std::string_view text, int max_depth = kMaxJsonDepth);

/// What a parse error says, without nlohmann's "[json.exception...] parse error at line L, column C: "
/// prefix (positions in the caller's own terms are better) and without its "; last read: '...'"
/// excerpt, which copies raw input bytes: e.g. "syntax error while parsing value - invalid string:
/// ill-formed UTF-8 byte".
std::string json_syntax_error(const nlohmann::json::parse_error& e);

/// The string member `key` of `j`, or "" when `j` is not an object or the member is absent or not a string.
std::string json_string(const nlohmann::json& j, const char* key);

/// `j` serialised (`indent` as nlohmann's dump: -1 for one line), with every invalid UTF-8 byte of its
/// strings written as U+FFFD instead of throwing type_error 316: what the store and the reports
/// write, since parameters, reasons and items can hold any bytes a path or an input file had.
/// `J` is nlohmann::json or nlohmann::ordered_json.
template <typename J>
std::string dump_json(const J& j, int indent = -1) {
  return j.dump(indent, ' ', false, J::error_handler_t::replace);
}

}  // namespace mlsb
