#include <gtest/gtest.h>

#include <filesystem>

#include "support/test_support.hpp"
#include "workloads/toolbench/servers.hpp"

namespace mlsb::toolbench {
namespace {

using nlohmann::json;

TEST(ToolbenchServers, ParsesStdioAndHttpEntries) {
  const ServersConfig cfg = parse_servers_config(json::parse(R"({"mcpServers": {
      "fs": {"command": "${npm_bin}/mcp-server-filesystem", "args": ["${workdir}"]},
      "mem": {"command": "mcp-server-memory", "env": {"MEMORY_FILE_PATH": "${memory_file}"}, "cwd": "/tmp"},
      "web": {"url": "http://localhost:${port}/mcp", "headers": {"Authorization": "Bearer x"}},
      "old": {"url": "http://localhost:1/sse", "type": "sse"}}})"), "cfg.json");
  ASSERT_EQ(cfg.servers.size(), 4u);
  EXPECT_EQ(cfg.servers.at("fs").command, "${npm_bin}/mcp-server-filesystem");
  EXPECT_EQ(cfg.servers.at("fs").cwd, "${workdir}");  // default: the trial's copy
  EXPECT_EQ(cfg.servers.at("mem").cwd, "/tmp");
  EXPECT_EQ(cfg.servers.at("web").headers.at("Authorization"), "Bearer x");
  EXPECT_EQ(cfg.servers.at("old").transport, "sse");
}

TEST(ToolbenchServers, ShapeErrorsNameTheServer) {
  const auto fails_with = [](const char* text, const char* needle) {
    try {
      parse_servers_config(json::parse(text), "cfg.json");
      ADD_FAILURE() << "accepted " << text;
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  fails_with(R"({"servers": {}})", "mcpServers");
  fails_with(R"({"mcpServers": {"a": {}}})", "server 'a': needs exactly one of 'command' or 'url'");
  fails_with(R"({"mcpServers": {"a": {"command": "x", "args": [1]}}})", "'args' must be an array of strings");
  fails_with(R"({"mcpServers": {"a": {"command": "x", "env": {"K": 1}}}})", "'env.K' must be a string");
  fails_with(R"({"mcpServers": {"a": {"url": "u", "type": "ws"}}})", "unknown type 'ws'");
}

TEST(ToolbenchServers, LoadNamesTheFile) {
  test::TempDir dir;
  test::write_file(dir / "s.json", "{not json");
  try {
    load_servers_config(dir / "s.json");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("s.json"), std::string::npos);
  }
  EXPECT_THROW(load_servers_config(dir / "absent.json"), ConfigError);
}

TEST(ToolbenchServers, DeepFoldersAndDevicesAreErrorsNamingTheFile) {
  test::TempDir dir;
  test::write_file(dir / "deep.json", R"({"mcpServers": {"fs": {"command": "x", "args": )" + std::string(100000, '[') +
                                          std::string(100000, ']') + "}}}");
  const auto fails_with = [](const std::filesystem::path& file, const std::string& needle) {
    try {
      load_servers_config(file);
      ADD_FAILURE() << "accepted " << file;
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("servers config " + file.string() + ": " + needle), std::string::npos)
          << e.what();
    }
  };
  fails_with(dir / "deep.json", "JSON nesting deeper than 512 levels");
  fails_with(dir.path(), "is not a regular file (a folder)");
  if (std::filesystem::exists("/dev/zero")) fails_with("/dev/zero", "is not a regular file");
}

TEST(ToolbenchServers, ExpandsPlaceholders) {
  const Vars vars{{"workdir", "/w"}, {"memory_file", "/m.jsonl"}};
  EXPECT_EQ(expand("${workdir}/a:${memory_file}", vars), "/w/a:/m.jsonl");
  EXPECT_EQ(expand("no placeholders", vars), "no placeholders");
  EXPECT_EQ(expand("$${workdir} is literal", vars), "${workdir} is literal");
  try {
    expand("${nope}", vars);
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown placeholder ${nope}"), std::string::npos) << e.what();
  }
  EXPECT_THROW(expand("${workdir", vars), ConfigError);
}

TEST(ToolbenchServers, InstantiatesPerTrial) {
  const ServersConfig cfg = parse_servers_config(json::parse(R"({"mcpServers": {
      "fs": {"command": "${npm_bin}/srv", "args": ["${workdir}", "--x"], "env": {"F": "${memory_file}"}},
      "web": {"url": "http://h/${workdir}"},
      "bad": {"command": "srv", "args": ["${port}"]}}})"), "cfg.json");
  const Vars vars{{"workdir", "/t/root"}, {"memory_file", "/t/m"}, {"npm_bin", "/bin"}};
  const mcp::ServerSpec fs = instantiate(cfg.servers.at("fs"), vars, "/t/logs/fs.log");
  EXPECT_EQ(fs.name, "fs");
  EXPECT_EQ(fs.command, (std::vector<std::string>{"/bin/srv", "/t/root", "--x"}));
  EXPECT_EQ(fs.env.at("F"), "/t/m");
  EXPECT_EQ(fs.cwd, "/t/root");
  EXPECT_EQ(fs.transport, "stdio");
  EXPECT_EQ(fs.stderr_log, "/t/logs/fs.log");
  const mcp::ServerSpec web = instantiate(cfg.servers.at("web"), vars, "");
  EXPECT_EQ(web.url, "http://h//t/root");
  EXPECT_EQ(web.transport, "http");
  try {
    instantiate(cfg.servers.at("bad"), vars, "");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("server 'bad'"), std::string::npos) << e.what();
  }
}

TEST(ToolbenchServers, BundledConfigParses) {
  const ServersConfig cfg = load_servers_config(test::source_dir() / "workloads" / "toolbench" / "servers.json");
  ASSERT_TRUE(cfg.servers.count("filesystem"));
  ASSERT_TRUE(cfg.servers.count("memory"));
  EXPECT_EQ(cfg.servers.at("memory").env.at("MEMORY_FILE_PATH"), "${memory_file}");
}

}  // namespace
}  // namespace mlsb::toolbench
