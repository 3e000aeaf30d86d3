#include "util/json_file.hpp"
#include "workloads/toolbench/servers.hpp"

namespace mlsb::toolbench {

using nlohmann::json;

namespace {

std::string text_field(const json& obj, const char* key, const std::string& where) {
  const json& v = obj.at(key);
  if (!v.is_string()) throw ConfigError(where + ": '" + key + "' must be a string");
  return v.get<std::string>();
}

std::map<std::string, std::string> text_map(const json& obj, const char* key, const std::string& where) {
  std::map<std::string, std::string> out;
  if (!obj.contains(key)) return out;
  const json& m = obj.at(key);
  if (!m.is_object()) throw ConfigError(where + ": '" + key + "' must be an object of strings");
  for (const auto& [k, v] : m.items()) {
    if (!v.is_string()) throw ConfigError(where + ": '" + key + "." + k + "' must be a string");
    out[k] = v.get<std::string>();
  }
  return out;
}

ServerEntry parse_entry(const std::string& name, const json& e, const std::string& origin) {
  const std::string where = origin + ": server '" + name + "'";
  if (!e.is_object()) throw ConfigError(where + ": must be an object");
  ServerEntry entry;
  entry.name = name;
  const bool has_command = e.contains("command"), has_url = e.contains("url");
  if (has_command == has_url) throw ConfigError(where + ": needs exactly one of 'command' or 'url'");
  if (has_command) {
    entry.command = text_field(e, "command", where);
    if (entry.command.empty()) throw ConfigError(where + ": 'command' is empty");
    if (e.contains("args")) {
      const json& args = e.at("args");
      if (!args.is_array()) throw ConfigError(where + ": 'args' must be an array of strings");
      for (const auto& a : args) {
        if (!a.is_string()) throw ConfigError(where + ": 'args' must be an array of strings");
        entry.args.push_back(a.get<std::string>());
      }
    }
    entry.env = text_map(e, "env", where);
    if (e.contains("cwd")) entry.cwd = text_field(e, "cwd", where);
  } else {
    entry.url = text_field(e, "url", where);
    entry.headers = text_map(e, "headers", where);
    for (const char* key : {"transport", "type"}) {
      if (!e.contains(key)) continue;
      const std::string t = text_field(e, key, where);
      if (t == "sse") entry.transport = "sse";
      else if (t == "http" || t == "streamable-http" || t == "streamableHttp") entry.transport = "http";
      else throw ConfigError(where + ": unknown " + key + " '" + t + "' (http, streamable-http or sse)");
    }
  }
  return entry;
}

}  // namespace

ServersConfig parse_servers_config(const json& doc, const std::string& origin) {
  if (!doc.is_object() || !doc.contains("mcpServers") || !doc.at("mcpServers").is_object())
    throw ConfigError(origin + ": expected {\"mcpServers\": {name: {...}}}");
  ServersConfig cfg;
  cfg.origin = origin;
  for (const auto& [name, e] : doc.at("mcpServers").items()) cfg.servers[name] = parse_entry(name, e, origin);
  return cfg;
}

ServersConfig load_servers_config(const std::filesystem::path& path) {
  json doc;
  try {
    doc = read_json_file(path, "servers config", kMaxConfigFileBytes);
  } catch (const JsonFileError& e) {
    throw ConfigError(e.what());
  }
  return parse_servers_config(doc, path.string());
}

std::string expand(std::string_view text, const Vars& vars) {
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    if (text.compare(i, 3, "$${") == 0) {
      out += "${";
      i += 3;
    } else if (text.compare(i, 2, "${") == 0) {
      const std::size_t end = text.find('}', i + 2);
      if (end == std::string_view::npos)
        throw ConfigError("unterminated placeholder in '" + std::string(text) + "'");
      const std::string name(text.substr(i + 2, end - i - 2));
      auto it = vars.find(name);
      if (it == vars.end()) {
        std::string known;
        for (const auto& [k, v] : vars) known += (known.empty() ? "" : ", ") + k;
        throw ConfigError("unknown placeholder ${" + name + "} (known: " + known + ")");
      }
      out += it->second;
      i = end + 1;
    } else {
      out += text[i++];
    }
  }
  return out;
}

mcp::ServerSpec instantiate(const ServerEntry& entry, const Vars& vars, const std::string& stderr_log) {
  try {
    mcp::ServerSpec spec;
    spec.name = entry.name;
    if (!entry.command.empty()) {
      spec.command.push_back(expand(entry.command, vars));
      for (const auto& a : entry.args) spec.command.push_back(expand(a, vars));
      for (const auto& [k, v] : entry.env) spec.env[k] = expand(v, vars);
      spec.cwd = expand(entry.cwd, vars);
      spec.transport = "stdio";
    } else {
      spec.url = expand(entry.url, vars);
      for (const auto& [k, v] : entry.headers) spec.headers[k] = expand(v, vars);
      spec.transport = entry.transport.empty() ? "http" : entry.transport;
    }
    spec.stderr_log = stderr_log;
    return spec;
  } catch (const ConfigError& e) {
    throw ConfigError("server '" + entry.name + "': " + e.what());
  }
}

}  // namespace mlsb::toolbench
