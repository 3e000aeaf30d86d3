#include "util/json_file.hpp"

#include <fstream>

#include "util/json_parse.hpp"

namespace mlsb {

namespace fs = std::filesystem;

namespace {

std::string mib(std::uintmax_t bytes) {
  return bytes % (1u << 20) == 0 ? std::to_string(bytes >> 20) + " MiB" : std::to_string(bytes) + " bytes";
}

}  // namespace

void require_regular_file(const fs::path& path, const std::string& what) {
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (!fs::exists(st)) throw JsonFileError(what + " " + path.string() + ": does not exist");
  if (!fs::is_regular_file(st))
    throw JsonFileError(what + " " + path.string() + ": is not a regular file" +
                        (fs::is_directory(st) ? " (a folder)" : ""));
}

nlohmann::json read_json_file(const fs::path& path, const std::string& what, std::uintmax_t max_bytes) {
  require_regular_file(path, what);
  const std::string name = what + " " + path.string();
  const std::string too_large = name + ": larger than the limit of " + mib(max_bytes);
  std::error_code ec;
  if (const auto size = fs::file_size(path, ec); !ec && size > max_bytes) throw JsonFileError(too_large);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw JsonFileError(name + ": cannot be opened");
  // Read at most one block past the limit: the file may have grown since.
  std::string text;
  char buf[1 << 16];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    text.append(buf, static_cast<std::size_t>(in.gcount()));
    if (text.size() > max_bytes) throw JsonFileError(too_large);
  }
  if (in.bad()) throw JsonFileError(name + ": cannot be read");
  try {
    return parse_json_limited(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw JsonFileError(name + ": not valid JSON (byte " + std::to_string(e.byte) + "): " + e.what());
  } catch (const nlohmann::json::exception& e) {  // e.g. a number too large for a double
    throw JsonFileError(name + ": not valid JSON: " + e.what());
  } catch (const std::length_error& e) {
    throw JsonFileError(name + ": " + e.what());
  }
}

}  // namespace mlsb
