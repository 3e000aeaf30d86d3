#pragma once
// The servers config (`{"mcpServers": {name: {...}}}`, the shape MCP hosts use) and its per-trial
// placeholder expansion into mcp::ServerSpec.
#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "mcp/client.hpp"

namespace mlsb::toolbench {

/// A config that cannot be used: not a regular file, unreadable, too large, invalid JSON, too deep,
/// wrong shape, unknown placeholder.
/// The message names the file (or origin) and the server or field.
struct ConfigError : std::runtime_error { using std::runtime_error::runtime_error; };

/// One server entry before expansion. Stdio entries have `command` (+ `args`, `env`, `cwd`);
/// HTTP entries have `url` (+ `headers`, and `type`/`transport`: "http" (Streamable HTTP) or "sse").
/// Every string may hold placeholders `${name}`.
struct ServerEntry {
  std::string name;
  std::string command;
  std::vector<std::string> args;
  std::map<std::string, std::string> env;
  std::string cwd = "${workdir}";  ///< stdio server's working directory; default: the trial's copy
  std::string url;
  std::string transport;
  std::map<std::string, std::string> headers;
};

struct ServersConfig {
  std::string origin;  ///< file path or a label, used in messages
  std::map<std::string, ServerEntry> servers;
};

/// Parses a config document; `origin` names it in errors. Throws ConfigError.
ServersConfig parse_servers_config(const nlohmann::json& doc, const std::string& origin);
/// Reads and parses a config file (a regular file of at most kMaxConfigFileBytes, nesting limited as
/// parse_json_limited). Throws ConfigError.
ServersConfig load_servers_config(const std::filesystem::path& path);

/// Placeholder values, name -> text (e.g. "workdir" -> "/tmp/x/root").
using Vars = std::map<std::string, std::string>;

/// Replaces each `${name}` in `text` with vars.at(name); "$${" yields a literal "${".
/// Throws ConfigError naming an unknown placeholder or an unterminated "${".
std::string expand(std::string_view text, const Vars& vars);

/// The spec of `entry` for one trial with every placeholder expanded; `stderr_log` is set as given.
/// Throws ConfigError (unknown placeholder, server named in the message).
mcp::ServerSpec instantiate(const ServerEntry& entry, const Vars& vars, const std::string& stderr_log);

}  // namespace mlsb::toolbench
