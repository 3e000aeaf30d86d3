// mcp-server-filesystem (npm) over stdio on a temp dir.
#include <gtest/gtest.h>

#include <algorithm>

#include "integration/mcp/mcp_test_helpers.hpp"
#include "mcp/client.hpp"
#include "support/test_support.hpp"

namespace mlsb::mcp::test {
namespace {

class McpFilesystem : public ::testing::Test {
 protected:
  void SetUp() override {
    if (npm_server("mcp-server-filesystem").empty()) GTEST_SKIP() << "npm servers missing: run scripts/setup-deps";
    root_ = std::filesystem::canonical(tmp_.path());
    mlsb::test::write_file(root_ / "hello.txt", "hello from mlsysbench\nline two\n");
    // By bare name: found in the bundled npm bin dir when it is not on PATH.
    spec_.name = "fs";
    spec_.command = {"mcp-server-filesystem", root_.string()};
    spec_.stderr_log = (log_dir_ / "fs.log").string();
  }
  mlsb::test::TempDir tmp_, log_dir_;
  std::filesystem::path root_;
  ServerSpec spec_;
};

TEST_F(McpFilesystem, HandshakeAndToolList) {
  auto client = Client::connect(spec_);
  EXPECT_EQ(client->protocol_version(), "2025-11-25");
  EXPECT_FALSE(client->server_info().value("name", "").empty());
  const auto tools = client->list_tools();
  for (const char* name : {"read_file", "read_text_file", "write_file", "list_directory"}) {
    const auto it = std::find_if(tools.begin(), tools.end(), [&](const ToolInfo& t) { return t.name == name; });
    ASSERT_NE(it, tools.end()) << name;
    EXPECT_FALSE(it->description.empty());
    EXPECT_EQ(it->input_schema.value("type", ""), "object");
  }
  client->ping();
}

TEST_F(McpFilesystem, ReadsAFileWeWrote) {
  auto client = Client::connect(spec_);
  const auto r = client->call_tool("read_text_file", {{"path", (root_ / "hello.txt").string()}});
  EXPECT_FALSE(r.is_error) << r.text();
  EXPECT_EQ(r.text(), "hello from mlsysbench\nline two\n");
  const auto r2 = client->call_tool("read_file", {{"path", (root_ / "hello.txt").string()}});
  EXPECT_FALSE(r2.is_error) << r2.text();
  EXPECT_NE(r2.text().find("hello from mlsysbench"), std::string::npos);
}

TEST_F(McpFilesystem, WriteThenListDirectory) {
  auto client = Client::connect(spec_);
  const auto w = client->call_tool("write_file", {{"path", (root_ / "new.txt").string()}, {"content", "abc"}});
  ASSERT_FALSE(w.is_error) << w.text();
  EXPECT_EQ(mlsb::test::read_file(root_ / "new.txt"), "abc");
  const auto l = client->call_tool("list_directory", {{"path", root_.string()}});
  EXPECT_NE(l.text().find("[FILE] new.txt"), std::string::npos) << l.text();
  EXPECT_NE(l.text().find("[FILE] hello.txt"), std::string::npos) << l.text();
}

TEST_F(McpFilesystem, MissingFileIsAToolError) {
  auto client = Client::connect(spec_);
  const auto r = client->call_tool("read_text_file", {{"path", (root_ / "missing.txt").string()}});
  EXPECT_TRUE(r.is_error);
  EXPECT_NE(r.text().find("missing.txt"), std::string::npos) << r.text();
  // The session is still usable after a tool error.
  EXPECT_FALSE(client->call_tool("list_allowed_directories", nlohmann::json::object()).is_error);
}

TEST_F(McpFilesystem, ConcurrentCallsGetTheirOwnResults) {
  auto client = Client::connect(spec_);
  for (int i = 0; i < 8; ++i) mlsb::test::write_file(root_ / ("f" + std::to_string(i)), "content " + std::to_string(i));
  std::vector<std::thread> threads;
  std::vector<std::string> texts(8);
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&, i] {
      texts[i] = client->call_tool("read_text_file", {{"path", (root_ / ("f" + std::to_string(i))).string()}}).text();
    });
  }
  for (auto& t : threads) t.join();
  for (int i = 0; i < 8; ++i) EXPECT_EQ(texts[i], "content " + std::to_string(i));
}

}  // namespace
}  // namespace mlsb::mcp::test
