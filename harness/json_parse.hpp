#pragma once
// Parsing untrusted JSON (task files, suite files, server replies) with a nesting limit, so a
// hostile or broken input gets an error instead of exhausting the stack in later recursive copies.
#include <string_view>

#include <nlohmann/json.hpp>

namespace mlsb {

/// Deepest nesting of arrays/objects accepted by parse_json_limited.
inline constexpr int kMaxJsonDepth = 512;

/// Parses `text`. Throws nlohmann::json::parse_error for invalid JSON, and std::length_error
/// ("JSON nesting deeper than N levels") when arrays or objects nest deeper than `max_depth`.
nlohmann::json parse_json_limited(std::string_view text, int max_depth = kMaxJsonDepth);

}  // namespace mlsb
