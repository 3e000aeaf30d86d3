// mcp-server-everything (npm) over Streamable HTTP (/mcp) and the legacy HTTP+SSE transport (/sse).
#include <gtest/gtest.h>

#include <algorithm>
#include <thread>

#include "integration/mcp/mcp_test_helpers.hpp"
#include "mcp/client.hpp"
#include "support/test_support.hpp"

namespace mlsb::mcp::test {
namespace {

bool has_tool(const std::vector<ToolInfo>& tools, const std::string& name) {
  return std::any_of(tools.begin(), tools.end(), [&](const ToolInfo& t) { return t.name == name; });
}

ServerSpec http_spec(const std::string& name, const std::string& url) {
  ServerSpec spec;
  spec.name = name;
  spec.url = url;
  return spec;
}

class McpEverythingHttp : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (npm_server("mcp-server-everything").empty()) return;
    log_dir_ = new mlsb::test::TempDir;
    server_ = new EverythingHttpServer("streamableHttp", *log_dir_ / "everything.log");
  }
  static void TearDownTestSuite() {
    delete server_;
    delete log_dir_;
  }
  void SetUp() override {
    if (!server_) GTEST_SKIP() << "npm servers missing: run scripts/setup-deps";
  }
  static ServerSpec spec() { return http_spec("everything", server_->url("/mcp")); }
  static inline mlsb::test::TempDir* log_dir_ = nullptr;
  static inline EverythingHttpServer* server_ = nullptr;
};

TEST_F(McpEverythingHttp, HandshakeListAndCall) {
  auto client = Client::connect(spec());
  EXPECT_EQ(client->protocol_version(), "2025-11-25");
  const auto tools = client->list_tools();
  EXPECT_TRUE(has_tool(tools, "echo"));
  EXPECT_TRUE(has_tool(tools, "get-sum"));
  const auto echo = client->call_tool("echo", {{"message", "hi there"}});
  EXPECT_FALSE(echo.is_error);
  EXPECT_EQ(echo.text(), "Echo: hi there");
  EXPECT_NE(client->call_tool("get-sum", {{"a", 2}, {"b", 40}}).text().find("42"), std::string::npos);
  client->ping();
}

TEST_F(McpEverythingHttp, StructuredContent) {
  auto client = Client::connect(spec());
  const auto r = client->call_tool("get-structured-content", {{"location", "Chicago"}});
  EXPECT_FALSE(r.is_error) << r.text();
  EXPECT_EQ(r.structured["temperature"], 36);
  EXPECT_EQ(r.structured["conditions"], "Light rain / drizzle");
}

TEST_F(McpEverythingHttp, SessionsAreSeparateAndClosedWithDelete) {
  auto a = Client::connect(spec());
  auto b = Client::connect(spec());
  EXPECT_EQ(a->call_tool("echo", {{"message", "a"}}).text(), "Echo: a");
  a->close();
  EXPECT_THROW(a->ping(), McpError);
  EXPECT_EQ(b->call_tool("echo", {{"message", "b"}}).text(), "Echo: b");
  // The server logs each DELETE it honours (to stdout, which the fixture copies to the log).
  const auto log = *log_dir_ / "everything.log";
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (mlsb::test::read_file(log).find("Received session termination request") == std::string::npos &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_NE(mlsb::test::read_file(log).find("Received session termination request"), std::string::npos);
}

TEST_F(McpEverythingHttp, InvalidArgumentsAreReported) {
  auto client = Client::connect(spec());
  try {
    const auto r = client->call_tool("get-sum", {{"a", "not a number"}});
    EXPECT_TRUE(r.is_error) << r.text();  // the SDK reports input validation as a tool error
  } catch (const RpcError& e) {
    EXPECT_EQ(e.code, -32602) << e.what();  // older SDKs used a JSON-RPC error
  }
}

TEST_F(McpEverythingHttp, HttpErrorStatusIsAnMcpError) {
  try {
    Client::connect(http_spec("wrong-path", server_->url("/no-such-endpoint")));
    FAIL() << "no McpError";
  } catch (const McpError& e) {
    EXPECT_NE(std::string(e.what()).find("HTTP 404"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("server 'wrong-path'"), std::string::npos) << e.what();
  }
}

TEST(McpHttp, NothingListeningIsAnMcpError) {
  EXPECT_THROW(Client::connect(http_spec("none", "http://127.0.0.1:9/mcp")), McpError);
}

TEST(McpLegacySse, HandshakeListAndCall) {
  if (npm_server("mcp-server-everything").empty()) GTEST_SKIP() << "npm servers missing: run scripts/setup-deps";
  mlsb::test::TempDir tmp;
  EverythingHttpServer server("sse", tmp / "everything-sse.log");
  ServerSpec spec = http_spec("legacy", server.url("/sse"));
  spec.transport = "sse";
  auto client = Client::connect(spec);
  EXPECT_TRUE(has_tool(client->list_tools(), "echo"));
  EXPECT_EQ(client->call_tool("echo", {{"message", "over sse"}}).text(), "Echo: over sse");
  client->ping();
  client->close();
}

}  // namespace
}  // namespace mlsb::mcp::test
