#include "mcp/command_lookup.hpp"

#include <unistd.h>

#include <cstdlib>
#include <string_view>

namespace mlsb::mcp {

namespace fs = std::filesystem;

namespace {
bool is_executable_file(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
}
}  // namespace

fs::path bundled_bin_dir() {
  if (const char* env = std::getenv("MLSB_MCP_SERVERS_BIN"); env && *env) return env;
  return fs::path(MLSB_SOURCE_DIR) / "mcp" / "servers" / "node_modules" / ".bin";
}

std::optional<fs::path> find_executable(const std::string& name, const std::string& path_env,
                                        const std::string& cwd) {
  if (name.empty()) return std::nullopt;
  if (name.find('/') != std::string::npos) {
    fs::path p = name;
    if (p.is_relative() && !cwd.empty()) p = fs::path(cwd) / p;
    if (is_executable_file(p)) return p;
    return std::nullopt;
  }
  for (std::string_view rest = path_env; !rest.empty();) {
    const size_t colon = rest.find(':');
    const std::string_view dir = rest.substr(0, colon);
    const fs::path p = fs::path(dir.empty() ? "." : std::string(dir)) / name;  // empty entry = current dir
    if (is_executable_file(p)) return p;
    rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
  }
  if (const fs::path p = bundled_bin_dir() / name; is_executable_file(p)) return p;
  return std::nullopt;
}

}  // namespace mlsb::mcp
