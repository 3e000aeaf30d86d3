#pragma once
// Finding a server's executable the way a shell would, plus the bundled npm bin folder.
#include <filesystem>
#include <optional>
#include <string>

namespace mlsb::mcp {

/// `<MLSB_SOURCE_DIR>/mcp/servers/node_modules/.bin`, or $MLSB_MCP_SERVERS_BIN when set.
std::filesystem::path bundled_bin_dir();

/// Resolves argv[0]: a name containing '/' is taken as a path (relative to `cwd` when given); any other
/// name is searched in each folder of `path_env` (a PATH value), then in bundled_bin_dir(). Returns the
/// executable regular file found, or nullopt.
std::optional<std::filesystem::path> find_executable(const std::string& name, const std::string& path_env,
                                                     const std::string& cwd);

}  // namespace mlsb::mcp
