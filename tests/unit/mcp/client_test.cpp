#include "mcp/client.hpp"

#include <gtest/gtest.h>

#include "mcp/jsonrpc.hpp"
#include "unit/mcp/fake_transport.hpp"

namespace mlsb::mcp {
namespace {

using nlohmann::json;
using test::FakeTransport;

ServerSpec named(const std::string& name) {
  ServerSpec spec;
  spec.name = name;
  return spec;
}

/// A scripted server: answers initialize with `version`, pages tools/list three tools per page, and
/// echoes tools/call.
struct ScriptedServer {
  std::string version = "2025-11-25";
  std::vector<json> received;

  FakeTransport::Responder responder() {
    return [this](const json& m, FakeTransport& t) {
      received.push_back(m);
      if (!m.contains("id")) return;
      const std::string method = m["method"];
      json result = json::object();
      if (method == "initialize") {
        result = {{"protocolVersion", version}, {"capabilities", {{"tools", json::object()}}},
                  {"serverInfo", {{"name", "scripted"}, {"version", "9"}}}};
      } else if (method == "tools/list") {
        const int page = m["params"].contains("cursor") ? std::stoi(m["params"]["cursor"].get<std::string>()) : 0;
        result["tools"] = json::array();
        for (int i = 0; i < 3; ++i) {
          const int n = page * 3 + i;
          result["tools"].push_back({{"name", "t" + std::to_string(n)}, {"description", "tool"},
                                     {"inputSchema", {{"type", "object"}}}});
        }
        if (page < 2) result["nextCursor"] = std::to_string(page + 1);
      } else if (method == "tools/call") {
        result = {{"content", {{{"type", "text"}, {"text", "one"}}, {{"type", "image"}, {"data", "x"}},
                               {{"type", "text"}, {"text", "two"}}}},
                  {"isError", m["params"]["name"] == "fails"},
                  {"structuredContent", {{"echo", m["params"]["arguments"]}}}};
      }
      t.deliver(jsonrpc::result(m["id"], result));
    };
  }
};

TEST(McpClient, HandshakeSendsInitializedAndTellsTheTransportTheVersion) {
  ScriptedServer server;
  auto transport = std::make_unique<FakeTransport>(server.responder());
  FakeTransport* fake = transport.get();
  auto client = Client::connect(std::move(transport), named("s"));
  EXPECT_EQ(client->protocol_version(), "2025-11-25");
  EXPECT_EQ(client->server_info()["name"], "scripted");
  EXPECT_EQ(fake->protocol_version, "2025-11-25");
  ASSERT_EQ(server.received.size(), 2u);
  EXPECT_EQ(server.received[0]["params"]["protocolVersion"], supported_protocol_versions().front());
  EXPECT_EQ(server.received[0]["params"]["clientInfo"]["name"], "mlsysbench");
  EXPECT_EQ(server.received[1], jsonrpc::notification("notifications/initialized", nullptr));
  client->close();
  EXPECT_TRUE(fake->closed);
}

TEST(McpClient, AcceptsAnOlderSupportedVersion) {
  ScriptedServer server;
  server.version = "2024-11-05";
  auto client = Client::connect(std::make_unique<FakeTransport>(server.responder()), named("s"));
  EXPECT_EQ(client->protocol_version(), "2024-11-05");
}

TEST(McpClient, RejectsAnUnsupportedVersionNamingBoth) {
  ScriptedServer server;
  server.version = "1999-01-01";
  try {
    Client::connect(std::make_unique<FakeTransport>(server.responder()), named("old"));
    FAIL() << "no McpError";
  } catch (const McpError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("server 'old'"), std::string::npos) << what;
    EXPECT_NE(what.find("1999-01-01"), std::string::npos) << what;
    EXPECT_NE(what.find("2025-11-25"), std::string::npos) << what;
  }
}

TEST(McpClient, ListToolsFollowsNextCursor) {
  ScriptedServer server;
  auto client = Client::connect(std::make_unique<FakeTransport>(server.responder()), named("s"));
  const auto tools = client->list_tools();
  ASSERT_EQ(tools.size(), 9u);
  for (size_t i = 0; i < tools.size(); ++i) EXPECT_EQ(tools[i].name, "t" + std::to_string(i));
  EXPECT_EQ(tools[4].input_schema, json({{"type", "object"}}));
  int list_calls = 0;
  for (const auto& m : server.received) list_calls += m.value("method", "") == "tools/list";
  EXPECT_EQ(list_calls, 3);
}

TEST(McpClient, CallToolReadsContentErrorFlagAndStructuredContent) {
  ScriptedServer server;
  auto client = Client::connect(std::make_unique<FakeTransport>(server.responder()), named("s"));
  const auto ok = client->call_tool("echo", {{"x", 1}});
  EXPECT_FALSE(ok.is_error);
  EXPECT_EQ(ok.content.size(), 3u);
  EXPECT_EQ(ok.text(), "one\ntwo");
  EXPECT_EQ(ok.structured, json({{"echo", {{"x", 1}}}}));
  EXPECT_TRUE(client->call_tool("fails", json::object()).is_error);
}

TEST(McpClient, MalformedResultsGiveAClearMcpError) {
  const std::vector<std::pair<json, std::string>> cases = {
      {json::array(), "malformed tools/list result: the result is not an object"},
      {{{"tools", "x"}}, "malformed tools/list result: `tools` is not an array"},
      {{{"tools", {{{"name", 3}}}}}, "malformed tools/list result: a tool has no string `name`"},
      {{{"tools", {"t"}}}, "malformed tools/list result: a tool has no string `name`"},
      {{{"tools", {{{"name", "t"}, {"description", 1}}}}}, "a tool's `description` is not a string"},
      {{{"tools", {{{"name", "t"}, {"inputSchema", "s"}}}}}, "a tool's `inputSchema` is not an object"},
  };
  for (const auto& [list_result, problem] : cases) {
    ScriptedServer server;
    auto inner = server.responder();
    auto client = Client::connect(std::make_unique<FakeTransport>([&](const json& m, FakeTransport& t) {
                                    if (m.value("method", "") != "tools/list") return inner(m, t);
                                    t.deliver(jsonrpc::result(m["id"], list_result));
                                  }),
                                  named("bad"));
    try {
      client->list_tools();
      FAIL() << "no McpError for " << list_result.dump();
    } catch (const McpError& e) {
      const std::string what = e.what();
      EXPECT_EQ(what.rfind("server 'bad': ", 0), 0u) << what;
      EXPECT_NE(what.find(problem), std::string::npos) << what;
    }
  }
}

TEST(McpClient, TextSkipsATextBlockWhoseTextIsNotAString) {
  CallResult r;
  r.content = {{{"type", "text"}, {"text", 5}}, {{"type", "text"}, {"text", "ok"}}, {{"type", 1}}};
  EXPECT_EQ(r.text(), "ok");
}

}  // namespace
}  // namespace mlsb::mcp
