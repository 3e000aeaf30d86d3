#pragma once
// Small text helpers shared by the CLI, the reports and the MCP client.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mlsb {

/// "a<sep>b<sep>c"; "" for no parts.
std::string join(const std::vector<std::string>& parts, std::string_view sep);

/// `text` with ASCII letters lowercased (other bytes, UTF-8 included, unchanged).
std::string ascii_lower(std::string_view text);

/// At most `max_bytes` bytes of `text`, cut at a UTF-8 character boundary (never inside a multi-byte
/// sequence), with `ellipsis` appended when anything was cut (its bytes count towards the limit).
std::string utf8_truncate(std::string_view text, size_t max_bytes, std::string_view ellipsis = "...");

/// FNV-1a 64-bit hash of the bytes of `text` (Fowler, Noll, Vo): stable across builds and machines.
uint64_t fnv1a64(std::string_view text);

}  // namespace mlsb
