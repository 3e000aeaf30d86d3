#pragma once
// Reading JSON input files (suites, task files, servers configs, placeholders) safely: only regular
// files, a size cap, and parse_json_limited's nesting limit, so a device, a folder, a huge or a
// deeply nested file gets an error naming it instead of hanging or overflowing the stack.
#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

namespace mlsb {

/// Largest configuration file (suite, servers config, placeholders) read.
inline constexpr std::uintmax_t kMaxConfigFileBytes = std::uintmax_t{16} << 20;

/// A JSON input that cannot be used. The message starts with "<what> <path>: ".
struct JsonFileError : std::runtime_error { using std::runtime_error::runtime_error; };

/// Throws JsonFileError ("<what> <path>: is not a regular file") unless `path` is a regular file
/// (after following symlinks): devices, pipes and folders are refused before anything is read.
void require_regular_file(const std::filesystem::path& path, const std::string& what);

/// Reads and parses the JSON file `path`; `what` ("task file") names it in messages. Throws
/// JsonFileError when it is not a regular file, cannot be read, is larger than `max_bytes`, is not
/// valid JSON (with the parse position: byte, line, column) or nests deeper than kMaxJsonDepth.
nlohmann::json read_json_file(const std::filesystem::path& path, const std::string& what, std::uintmax_t max_bytes);

}  // namespace mlsb
