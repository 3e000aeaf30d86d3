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

/// The parts of `text` between `sep`s ("a,,b" -> "a", "", "b"; "" -> one empty part).
std::vector<std::string> split(std::string_view text, char sep);

/// `text` with ASCII letters lowercased (other bytes, UTF-8 included, unchanged).
std::string ascii_lower(std::string_view text);

/// At most `max_bytes` bytes of `text`, cut at a UTF-8 character boundary (never inside a multi-byte
/// sequence), with `ellipsis` appended when anything was cut (its bytes count towards the limit).
std::string utf8_truncate(std::string_view text, size_t max_bytes, std::string_view ellipsis = "...");
/// The UTF-8 character boundary at or before byte `i` of `text` (i <= text.size()): `i` moved back over
/// continuation bytes, so that text.substr(0, result) never ends in the middle of a character.
size_t utf8_boundary_before(std::string_view text, size_t i);
/// The UTF-8 character boundary at or after byte `i`: text.substr(result) never starts mid-character.
size_t utf8_boundary_after(std::string_view text, size_t i);

/// At most `max_bytes` bytes of `text`, cut at a UTF-8 character boundary; when anything was cut a marker
/// follows that says so and how long the original was: "... [cut: 4096 of 300000 bytes shown]" (the
/// marker's bytes are on top of `max_bytes`). For excerpts a person or a model reads.
std::string utf8_excerpt(std::string_view text, size_t max_bytes);

/// An excerpt of a log for an error message: the whole text when it fits in `tail_bytes`; else the first
/// line that names an error (case-insensitive "error", "exception", "fatal", "cannot", "denied") when it
/// lies before the tail (the cause is often there, above a stack trace), then the last `tail_bytes`
/// bytes; each gap is marked "[... N bytes cut of M ...]". Cuts fall on UTF-8 character boundaries.
std::string log_excerpt(std::string_view text, size_t tail_bytes);

/// " (did you mean 'x'?)" naming the candidate closest to `word` by edit distance (insertions, deletions,
/// substitutions and swaps of neighbours, case folded), when it is within a third of the word's length (at
/// least 1, at most 3 edits; a candidate that differs only in case is the nearest); else "".
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

/// The terminal columns `text` takes: its UTF-8 code points (no wide characters assumed).
size_t utf8_columns(std::string_view text);

/// `text` broken at spaces into lines of at most `width` columns, each after a prefix of `indent` columns: the
/// caller writes the first line's prefix, and every later line starts with `indent` spaces (a word too long
/// for a line stands alone on one). No final newline; columns are UTF-8 code points.
std::string word_wrap(std::string_view text, size_t width, size_t indent);

/// FNV-1a 64-bit hash of the bytes of `text` (Fowler, Noll, Vo): stable across builds and machines.
uint64_t fnv1a64(std::string_view text);

/// `v` in the shortest text that parses back to it ("5", "0.2", "1e-06"), as std::to_chars writes it.
std::string shortest(double v);

}  // namespace mlsb
