#include "mcp/rpc_session.hpp"

#include <gtest/gtest.h>

#include <future>

#include "mcp/client.hpp"
#include "mcp/jsonrpc.hpp"
#include "support/test_support.hpp"
#include "unit/mcp/fake_transport.hpp"

namespace mlsb::mcp {
namespace {

using nlohmann::json;
using test::FakeTransport;
using namespace std::chrono_literals;

struct SessionFixture {
  mlsb::test::TempDir tmp;
  std::string log = (tmp / "warnings.log").string();
  FakeTransport* fake = nullptr;
  std::unique_ptr<RpcSession> session;

  explicit SessionFixture(FakeTransport::Responder responder = {}) {
    auto t = std::make_unique<FakeTransport>(std::move(responder));
    fake = t.get();
    session = std::make_unique<RpcSession>(std::move(t), WarningSink("fake", log));
  }
  std::string warnings() const { return std::filesystem::exists(log) ? mlsb::test::read_file(log) : ""; }
};

TEST(McpJsonRpc, ClassifiesMessages) {
  EXPECT_EQ(jsonrpc::classify(jsonrpc::request(1, "ping", nullptr)), jsonrpc::Kind::request);
  EXPECT_EQ(jsonrpc::classify(jsonrpc::notification("n", json::object())), jsonrpc::Kind::notification);
  EXPECT_EQ(jsonrpc::classify(jsonrpc::result(1, json::object())), jsonrpc::Kind::response);
  EXPECT_EQ(jsonrpc::classify(jsonrpc::error(nullptr, -32700, "parse")), jsonrpc::Kind::response);
  EXPECT_EQ(jsonrpc::classify(json::array()), jsonrpc::Kind::invalid);
  EXPECT_EQ(jsonrpc::classify(json{{"jsonrpc", "2.0"}, {"method", 5}}), jsonrpc::Kind::invalid);
  EXPECT_EQ(jsonrpc::classify(json{{"jsonrpc", "2.0"}, {"id", 1}}), jsonrpc::Kind::invalid);
  EXPECT_FALSE(jsonrpc::request(1, "ping", nullptr).contains("params"));
}

TEST(McpRpcSession, MatchesResponsesOutOfOrder) {
  SessionFixture f;
  auto a = std::async(std::launch::async, [&] { return f.session->request("a", json::object(), 5s); });
  auto b = std::async(std::launch::async, [&] { return f.session->request("b", json::object(), 5s); });
  const auto sent = f.fake->wait_sent(2);
  // Answer in the reverse order of sending.
  for (auto it = sent.rbegin(); it != sent.rend(); ++it) {
    f.fake->deliver(jsonrpc::result((*it)["id"], {{"method", (*it)["method"]}}));
  }
  EXPECT_EQ(a.get()["method"], "a");
  EXPECT_EQ(b.get()["method"], "b");
}

TEST(McpRpcSession, UnknownIdIsLoggedAndIgnored) {
  SessionFixture f([](const json& sent, FakeTransport& self) {
    if (!sent.contains("id")) return;
    self.deliver(jsonrpc::result(sent["id"].get<int64_t>() + 1000, {{"wrong", true}}));
    self.deliver(jsonrpc::result("not-a-number", {{"wrong", true}}));
    self.deliver(jsonrpc::result(sent["id"], {{"right", true}}));
  });
  EXPECT_EQ(f.session->request("x", nullptr, 5s), json({{"right", true}}));
  EXPECT_NE(f.warnings().find("unknown id 1001"), std::string::npos) << f.warnings();
  EXPECT_NE(f.warnings().find("unknown id \"not-a-number\""), std::string::npos) << f.warnings();
}

TEST(McpRpcSession, TimesOutAndDropsTheLateResponse) {
  SessionFixture f;
  const auto start = std::chrono::steady_clock::now();
  EXPECT_THROW(f.session->request("slow", nullptr, 50ms), TimeoutError);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
  f.fake->deliver(jsonrpc::result(1, json::object()));  // too late: a warning, not a crash
  EXPECT_NE(f.warnings().find("unknown id 1"), std::string::npos);
}

TEST(McpRpcSession, ErrorResponseBecomesRpcError) {
  SessionFixture f([](const json& sent, FakeTransport& self) {
    json reply = jsonrpc::error(sent["id"], jsonrpc::kInvalidParams, "bad path");
    reply["error"]["data"] = {{"path", "/x"}};
    self.deliver(reply);
  });
  try {
    f.session->request("tools/call", json::object(), 5s);
    FAIL() << "no RpcError";
  } catch (const RpcError& e) {
    EXPECT_EQ(e.code, -32602);
    EXPECT_EQ(e.data, json({{"path", "/x"}}));
    EXPECT_NE(std::string(e.what()).find("bad path"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("server 'fake'"), std::string::npos);
  }
}

TEST(McpRpcSession, MalformedErrorObjectsGiveAClearMcpError) {
  const std::vector<std::pair<json, std::string>> cases = {
      {{{"code", "oops"}, {"message", "m"}}, "error `code` is missing or not an integer"},
      {{{"code", 1.5}, {"message", "m"}}, "error `code` is missing or not an integer"},
      {{{"code", 1}, {"message", 7}}, "error `message` is missing or not a string"},
      {{{"code", 1}}, "error `message` is missing or not a string"},
      {{{"code", 99999999999LL}, {"message", "m"}}, "error `code` is out of range"},
      {"just a string", "`error` is not an object"},
  };
  for (const auto& [error, problem] : cases) {
    SessionFixture f([&](const json& sent, FakeTransport& self) {
      self.deliver({{"jsonrpc", "2.0"}, {"id", sent["id"]}, {"error", error}});
    });
    try {
      f.session->request("tools/call", json::object(), 5s);
      FAIL() << "no McpError for " << error.dump();
    } catch (const RpcError& e) {
      FAIL() << "RpcError for " << error.dump() << ": " << e.what();
    } catch (const McpError& e) {
      const std::string what = e.what();
      EXPECT_EQ(what.rfind("server 'fake': malformed response to 'tools/call': ", 0), 0u) << what;
      EXPECT_NE(what.find(problem), std::string::npos) << what;
    }
  }
}

TEST(McpRpcSession, ResponseWithBothResultAndErrorIsMalformed) {
  SessionFixture f([](const json& sent, FakeTransport& self) {
    self.deliver({{"jsonrpc", "2.0"}, {"id", sent["id"]}, {"result", 1}, {"error", {{"code", 1}, {"message", "m"}}}});
  });
  EXPECT_THROW(
      {
        try {
          f.session->request("ping", nullptr, 5s);
        } catch (const RpcError&) {
          FAIL() << "RpcError";
        }
      },
      McpError);
}

TEST(McpJsonRpc, ParseMessageRefusesDeepNestingAndNonJson) {
  std::string problem;
  EXPECT_EQ(jsonrpc::parse_message(R"({"a":[1]})", problem), json({{"a", {1}}}));
  const std::string deep(200000, '[');
  EXPECT_FALSE(jsonrpc::parse_message(deep, problem));
  EXPECT_EQ(problem.rfind("nests JSON deeper than 512 levels: [[[", 0), 0u) << problem.substr(0, 100);
  EXPECT_LT(problem.size(), 400u);
  EXPECT_FALSE(jsonrpc::parse_message("{ nope", problem));
  EXPECT_EQ(problem, "is not JSON: { nope");
}

TEST(McpServerLog, KeepsTheFirstBytesAndNotesTheCutOnce) {
  mlsb::test::TempDir tmp;
  const std::string log = (tmp / "s.log").string();
  const std::string chunk(1 << 20, 'e');
  for (int i = 0; i < 6; ++i) EXPECT_TRUE(append_to_server_log(log, "s", chunk));
  WarningSink("s", log)("a warning past the cap");
  const std::string text = mlsb::test::read_file(log);
  const std::string note = "mlsysbench mcp: server 's': log reached 4 MiB; dropping the rest\n";
  EXPECT_EQ(text.size(), kMaxServerLogBytes + 1 + note.size());
  EXPECT_EQ(text.substr(text.size() - note.size()), note);
  EXPECT_EQ(text.find("a warning"), std::string::npos);
}

TEST(McpRpcSession, AnswersServerRequests) {
  SessionFixture f;
  f.fake->deliver(jsonrpc::request(7, "ping", nullptr));
  f.fake->deliver(jsonrpc::request(8, "roots/list", nullptr));
  f.fake->deliver(jsonrpc::notification("notifications/message", {{"level", "info"}}));
  const auto sent = f.fake->wait_sent(2);
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[0], jsonrpc::result(7, json::object()));
  EXPECT_EQ(sent[1]["id"], 8);
  EXPECT_EQ(sent[1]["error"]["code"], jsonrpc::kMethodNotFound);
}

TEST(McpRpcSession, ConnectionEndFailsPendingAndLaterRequests) {
  SessionFixture f;
  auto pending = std::async(std::launch::async, [&] { return f.session->request("a", nullptr, 30s); });
  f.fake->wait_sent(1);
  f.fake->end("server 'fake': exited with status 3");
  try {
    pending.get();
    FAIL() << "no McpError";
  } catch (const TimeoutError&) {
    FAIL() << "a dead server must not look like a timeout";
  } catch (const McpError& e) {
    EXPECT_NE(std::string(e.what()).find("exited with status 3"), std::string::npos) << e.what();
  }
  EXPECT_THROW(f.session->request("b", nullptr, 30s), McpError);
}

}  // namespace
}  // namespace mlsb::mcp
