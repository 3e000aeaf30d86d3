// The Streamable HTTP transport against a scripted cpp-httplib server that records what the client sent
// and answers the ways the spec allows: a JSON body, an SSE stream, 202 for notifications, 405 to DELETE.
#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <mutex>
#include <thread>

#include "mcp/client.hpp"

namespace mlsb::mcp {
namespace {

using nlohmann::json;

struct Recorded {
  std::string method, accept, content_type, session, protocol, custom;
  json body;
};

class McpHttpProtocol : public ::testing::Test {
 protected:
  void SetUp() override {
    server_.Post("/mcp", [this](const httplib::Request& req, httplib::Response& res) { on_post(req, res); });
    server_.Delete("/mcp", [this](const httplib::Request& req, httplib::Response& res) {
      record(req, json());
      res.status = 405;
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });  // bound: connections queue until it runs
  }
  void TearDown() override {
    server_.stop();
    thread_.join();
  }

  void record(const httplib::Request& req, json body) {
    std::lock_guard lock(mu_);
    seen_.push_back({req.method, req.get_header_value("Accept"), req.get_header_value("Content-Type"),
                     req.get_header_value("Mcp-Session-Id"), req.get_header_value("MCP-Protocol-Version"),
                     req.get_header_value("X-Custom"), std::move(body)});
  }

  void on_post(const httplib::Request& req, httplib::Response& res) {
    const json m = json::parse(req.body);
    record(req, m);
    if (fail_) {
      res.status = 503;
      res.set_content("overloaded", "text/plain");
      return;
    }
    const std::string method = m.value("method", "");
    if (!m.contains("id")) {
      res.status = 202;
      return;
    }
    if (method == "initialize") {
      res.set_header("Mcp-Session-Id", "session-123");
      res.set_content(json{{"jsonrpc", "2.0"}, {"id", m["id"]},
                           {"result", {{"protocolVersion", "2025-06-18"}, {"capabilities", json::object()},
                                       {"serverInfo", {{"name", "scripted-http"}, {"version", "1"}}}}}}
                          .dump(),
                      "application/json");
    } else if (method == "tools/call") {
      // A progress notification and a server ping first, the data split over two lines, CRLF line ends.
      const json result = {{"jsonrpc", "2.0"}, {"id", m["id"]},
                           {"result", {{"content", {{{"type", "text"}, {"text", "from sse"}}}}}}};
      std::string text = result.dump();
      const size_t half = text.find(',') + 1;  // between tokens: the joining '\n' is JSON whitespace
      res.set_content(": keepalive\r\n\r\n"
                      "event: message\r\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\r\n\r\n"
                      "data: " + text.substr(0, half) + "\r\ndata: " + text.substr(half) + "\r\n\r\n",
                      "text/event-stream");
    } else {
      res.set_content(json{{"jsonrpc", "2.0"}, {"id", m["id"]}, {"result", json::object()}}.dump(),
                      "application/json");
    }
  }

  ServerSpec spec() const {
    ServerSpec s;
    s.name = "scripted";
    s.url = "http://127.0.0.1:" + std::to_string(port_) + "/mcp";
    s.headers = {{"X-Custom", "yes"}};
    return s;
  }

  httplib::Server server_;
  int port_ = 0;
  std::atomic<bool> fail_ = false;
  std::thread thread_;
  std::mutex mu_;
  std::vector<Recorded> seen_;
};

TEST_F(McpHttpProtocol, HeadersSessionAndReplyFormats) {
  auto client = Client::connect(spec());
  EXPECT_EQ(client->protocol_version(), "2025-06-18");
  EXPECT_EQ(client->call_tool("t", json::object()).text(), "from sse");
  client->ping();
  client->close();

  std::lock_guard lock(mu_);
  ASSERT_EQ(seen_.size(), 5u);  // initialize, initialized, tools/call, ping, DELETE
  for (const auto& r : seen_) {
    EXPECT_EQ(r.custom, "yes");
    if (r.method == "POST") {
      EXPECT_EQ(r.accept, "application/json, text/event-stream");
      EXPECT_EQ(r.content_type, "application/json");
    }
  }
  EXPECT_EQ(seen_[0].body["method"], "initialize");
  EXPECT_EQ(seen_[0].session, "");
  EXPECT_EQ(seen_[0].protocol, "");
  EXPECT_EQ(seen_[1].body["method"], "notifications/initialized");
  for (size_t i = 1; i < seen_.size(); ++i) {
    EXPECT_EQ(seen_[i].session, "session-123") << i;
    EXPECT_EQ(seen_[i].protocol, "2025-06-18") << i;
  }
  EXPECT_EQ(seen_[4].method, "DELETE");  // answered 405, which close() accepts quietly
}

TEST_F(McpHttpProtocol, ErrorStatusNamesTheStatus) {
  fail_ = true;
  try {
    Client::connect(spec());
    FAIL() << "no McpError";
  } catch (const McpError& e) {
    EXPECT_NE(std::string(e.what()).find("HTTP 503: overloaded"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace mlsb::mcp
