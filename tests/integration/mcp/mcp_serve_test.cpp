// `mlsysbench mcp-serve`: the harness as an MCP server, driven by our own client (stdio and Streamable
// HTTP), by the official TypeScript SDK client, and probed with raw HTTP for the transport's rules.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include <httplib.h>

#include "mcp/child_process.hpp"
#include "mcp/client.hpp"
#include "support/test_support.hpp"

namespace mlsb::mcp {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// An `mlsysbench --db DB mcp-serve --http` process and the URL it printed.
class HttpServe {
 public:
  explicit HttpServe(const fs::path& db, const fs::path& log)
      : log_(log),
        child_(SpawnOptions{mlsb::test::binary(),
                            {mlsb::test::binary().string(), "--db", db.string(), "mcp-serve", "--http", "--port", "0"},
                            {}, "", log.string(), false}) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (url_.empty() && std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      const std::string text = fs::exists(log_) ? mlsb::test::read_file(log_) : "";
      const auto at = text.find("listening on ");
      if (at != std::string::npos) url_ = text.substr(at + 13, text.find(' ', at + 13) - at - 13);
    }
  }
  ~HttpServe() { child_.stop(std::chrono::seconds(2)); }
  const std::string& url() const { return url_; }

 private:
  fs::path log_;
  ChildProcess child_;
  std::string url_;
};

ServerSpec stdio_spec(const fs::path& db, const fs::path& log) {
  ServerSpec spec;
  spec.name = "mlsysbench";
  spec.command = {mlsb::test::binary().string(), "--db", db.string(), "mcp-serve"};
  spec.stderr_log = log.string();
  return spec;
}

// What both transports must do: list, run twice, list runs, report, compare, and fail cleanly.
void exercise(Client& client) {
  std::vector<std::string> names;
  for (const auto& t : client.list_tools()) names.push_back(t.name);
  EXPECT_EQ(names, (std::vector<std::string>{"list_workloads", "list_suites", "run", "list_runs", "get_report",
                                             "compare_runs"}));
  const CallResult workloads = client.call_tool("list_workloads", json::object());
  ASSERT_FALSE(workloads.is_error) << workloads.text();
  bool toolbench = false;
  for (const auto& w : workloads.structured["workloads"]) toolbench = toolbench || w["name"] == "toolbench";
  EXPECT_TRUE(toolbench);
  EXPECT_FALSE(client.call_tool("list_suites", json::object()).structured["suites"].empty());

  const json run_args = {{"target", "toolbench"}, {"params", {{"limit", 2}, {"agent", "oracle"}}}, {"tags", {"mcp"}}};
  const CallResult dry = client.call_tool("run", {{"target", "toolbench"}, {"params", {{"agent", {"oracle", "heuristic"}}}},
                                                  {"dry_run", true}});
  EXPECT_EQ(dry.structured["cases"].size(), 2u) << dry.text();
  for (int i = 0; i < 2; ++i) {
    const CallResult ran = client.call_tool("run", run_args);
    ASSERT_FALSE(ran.is_error) << ran.text();
    EXPECT_EQ(ran.structured["status"], "ok") << ran.text();
    EXPECT_EQ(ran.structured["ok"], 1);
  }
  const CallResult runs = client.call_tool("list_runs", json::object());
  EXPECT_EQ(runs.structured["runs"].size(), 2u) << runs.text();
  EXPECT_EQ(runs.structured["runs"][0]["tags"], json({"mcp"}));
  const CallResult report = client.call_tool("get_report", {{"run", "mcp"}, {"format", "json"}});
  ASSERT_FALSE(report.is_error) << report.text();
  EXPECT_EQ(report.structured["cases"].size(), 1u) << report.text();
  const CallResult md = client.call_tool("get_report", {{"format", "md"}});
  EXPECT_NE(md.text().find("# mlsysbench report"), std::string::npos);
  const CallResult cmp = client.call_tool("compare_runs", {{"base", "latest~1"}, {"candidate", "latest"}});
  ASSERT_FALSE(cmp.is_error) << cmp.text();
  EXPECT_TRUE(cmp.structured.contains("regression")) << cmp.text();
  EXPECT_NE(cmp.structured["comparison"]["metrics"].dump().find("pass_at_1"), std::string::npos) << cmp.text();
  EXPECT_NE(cmp.text().find("primary-metric regression:"), std::string::npos) << cmp.text();

  // Agent mistakes are tool errors with a reason; an unknown tool is a protocol error.
  const CallResult missing = client.call_tool("get_report", {{"run", "no-such-run"}});
  EXPECT_TRUE(missing.is_error);
  EXPECT_NE(missing.text().find("no run matches 'no-such-run'"), std::string::npos) << missing.text();
  const CallResult bad_axis = client.call_tool("run", {{"target", "toolbench"}, {"params", {{"trials", 0}}}});
  EXPECT_TRUE(bad_axis.is_error);
  EXPECT_NE(bad_axis.text().find("trials"), std::string::npos) << bad_axis.text();
  for (const json& reps : {json(-3), json(1e12), json("2")}) {
    const CallResult bad_reps = client.call_tool("run", {{"target", "toolbench"}, {"repetitions", reps}});
    EXPECT_TRUE(bad_reps.is_error) << reps;
    EXPECT_NE(bad_reps.text().find("'repetitions' must be an integer from 1 to 1000000"), std::string::npos);
  }
  const CallResult wrong_type = client.call_tool("run", {{"target", 5}});
  EXPECT_TRUE(wrong_type.is_error);
  EXPECT_NE(wrong_type.text().find("argument 'target' has the wrong type"), std::string::npos) << wrong_type.text();
  try {
    client.call_tool("teleport", json::object());
    FAIL() << "an unknown tool was accepted";
  } catch (const RpcError& e) {
    EXPECT_EQ(e.code, -32602);
  }
}

TEST(McpServe, StdioServesTheHarnessToOurClient) {
  mlsb::test::TempDir dir;
  auto client = Client::connect(stdio_spec(dir / "runs.db", dir / "serve.log"));
  EXPECT_EQ(client->server_info()["name"], "mlsysbench");
  const CallResult none = client->call_tool("get_report", json::object());  // nothing stored yet
  EXPECT_TRUE(none.is_error);
  EXPECT_NE(none.text().find("no runs yet"), std::string::npos) << none.text();
  EXPECT_TRUE(client->call_tool("list_runs", json::object()).structured["runs"].empty());
  EXPECT_EQ(client->protocol_version(), supported_protocol_versions().front());
  exercise(*client);
  client->close();
  EXPECT_TRUE(fs::exists(dir / "runs.db"));
}

TEST(McpServe, StreamableHttpServesTheHarnessToOurClient) {
  mlsb::test::TempDir dir;
  HttpServe serve(dir / "runs.db", dir / "serve.log");
  ASSERT_FALSE(serve.url().empty()) << mlsb::test::read_file(dir / "serve.log");
  EXPECT_EQ(serve.url().rfind("http://127.0.0.1:", 0), 0u);
  ServerSpec spec;
  spec.name = "mlsysbench-http";
  spec.url = serve.url();
  auto client = Client::connect(spec);
  exercise(*client);
  client->close();
}

// Sends `head` and 1 KiB of the body it announces, and returns what the server answers within 10 s
// ("" when nothing): a refusal made on the headers arrives although the body never does.
std::string answer_to_partial_post(int port, const std::string& head) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  timeval timeout{10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  std::string answer;
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
    const std::string partial = head + std::string(1024, ' ');
    if (send(fd, partial.data(), partial.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(partial.size())) {
      char buf[4096];
      for (ssize_t n; (n = recv(fd, buf, sizeof buf, 0)) > 0;) {
        answer.append(buf, static_cast<size_t>(n));
        if (const size_t end = answer.find("\r\n\r\n"); end != std::string::npos && answer.size() > end + 4) break;
      }
    }
  }
  close(fd);
  return answer;
}

// The transport's rules, by hand: sessions, GET, protocol version, Origin, bad JSON.
TEST(McpServe, StreamableHttpEnforcesSessionsVersionAndOrigin) {
  mlsb::test::TempDir dir;
  HttpServe serve(dir / "runs.db", dir / "serve.log");
  ASSERT_FALSE(serve.url().empty());
  const std::string port = serve.url().substr(17, serve.url().rfind('/') - 17);
  httplib::Client http("127.0.0.1", std::stoi(port));
  const json init = {{"jsonrpc", "2.0"}, {"id", 1}, {"method", "initialize"},
                     {"params", {{"protocolVersion", "2024-11-05"}, {"capabilities", json::object()},
                                 {"clientInfo", {{"name", "raw"}, {"version", "1"}}}}}};
  auto res = http.Post("/mcp", init.dump(), "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(json::parse(res->body)["result"]["protocolVersion"], "2024-11-05");
  const std::string session = res->get_header_value("Mcp-Session-Id");
  ASSERT_FALSE(session.empty());
  const std::string ping = json{{"jsonrpc", "2.0"}, {"id", 2}, {"method", "ping"}}.dump();
  EXPECT_EQ(http.Post("/mcp", ping, "application/json")->status, 400);  // no session
  EXPECT_EQ(http.Post("/mcp", {{"Mcp-Session-Id", "nope"}}, ping, "application/json")->status, 404);
  EXPECT_EQ(http.Post("/mcp", {{"Mcp-Session-Id", session}}, ping, "application/json")->status, 200);
  EXPECT_EQ(http.Post("/mcp", {{"Mcp-Session-Id", session}, {"MCP-Protocol-Version", "1999-01-01"}}, ping,
                      "application/json")->status, 400);
  EXPECT_EQ(http.Post("/mcp", {{"Mcp-Session-Id", session}, {"Origin", "http://evil.example"}}, ping,
                      "application/json")->status, 403);
  EXPECT_EQ(http.Post("/mcp", {{"Mcp-Session-Id", session}, {"Origin", "http://localhost:3000"}}, ping,
                      "application/json")->status, 200);
  const std::string note = json{{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}}.dump();
  EXPECT_EQ(http.Post("/mcp", {{"Mcp-Session-Id", session}}, note, "application/json")->status, 202);
  res = http.Post("/mcp", {{"Mcp-Session-Id", session}}, "{not json", "application/json");
  EXPECT_EQ(res->status, 400);
  EXPECT_EQ(json::parse(res->body)["error"]["code"], -32700);
  EXPECT_EQ(http.Get("/mcp", {{"Mcp-Session-Id", session}})->status, 405);
  // DNS rebinding: another Host is refused, with or without an Origin; loopback names and ports pass.
  EXPECT_EQ(http.Post("/mcp", {{"Mcp-Session-Id", session}, {"Host", "evil.example"}}, ping,
                      "application/json")->status, 403);
  EXPECT_EQ(http.Post("/mcp", {{"Mcp-Session-Id", session}, {"Host", "evil.example:" + port}}, ping,
                      "application/json")->status, 403);
  EXPECT_EQ(http.Post("/mcp", {{"Mcp-Session-Id", session}, {"Host", "localhost:" + port}}, ping,
                      "application/json")->status, 200);
  // A body over the 4 MiB limit is 413, and with a forbidden Origin 403: both answered from the headers,
  // while the client has sent 1 KiB of the 5 MiB it announced.
  const std::string head = "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:" + port + "\r\nContent-Type: application/json\r\n"
                           "Mcp-Session-Id: " + session + "\r\nContent-Length: 5242880\r\n";
  const std::string too_big = answer_to_partial_post(std::stoi(port), head + "\r\n");
  EXPECT_EQ(too_big.rfind("HTTP/1.1 413", 0), 0u) << too_big;
  EXPECT_THAT(too_big, ::testing::HasSubstr("request body over 4194304 bytes"));
  const std::string forbidden = answer_to_partial_post(std::stoi(port), head + "Origin: http://evil.example\r\n\r\n");
  EXPECT_EQ(forbidden.rfind("HTTP/1.1 403", 0), 0u) << forbidden;
  EXPECT_EQ(http.Post("/mcp", {{"Mcp-Session-Id", session}}, ping, "application/json")->status, 200);  // still up
  EXPECT_EQ(http.Delete("/mcp", {{"Mcp-Session-Id", session}})->status, 200);
  EXPECT_EQ(http.Post("/mcp", {{"Mcp-Session-Id", session}}, ping, "application/json")->status, 404);  // ended
}

// The official conformance suite's server scenarios that apply to a tools-only server.
TEST(McpServe, PassesTheConformanceServerScenarios) {
  const fs::path cli = mlsb::test::npm_bin_dir() / "conformance";
  ASSERT_TRUE(fs::exists(cli)) << cli << " missing: run scripts/setup-deps";
  mlsb::test::TempDir dir;
  HttpServe serve(dir / "runs.db", dir / "serve.log");
  ASSERT_FALSE(serve.url().empty());
  for (const char* scenario : {"server-initialize", "ping", "tools-list", "dns-rebinding-protection"}) {
    const fs::path out = dir / scenario;
    const mlsb::test::CommandResult r = mlsb::test::run_shell(mlsb::test::shell_quote(cli) + " server --url " + serve.url() +
                                                  " --scenario " + scenario + " -o " + mlsb::test::shell_quote(out));
    EXPECT_EQ(r.exit_code, 0) << scenario << ": " << r.out << r.err;
    int checked = 0;
    for (const auto& run : fs::directory_iterator(out))
      for (const auto& c : json::parse(mlsb::test::read_file(run.path() / "checks.json"))) {
        const std::string status = c.value("status", "");
        EXPECT_TRUE(status == "SUCCESS" || status == "INFO") << scenario << ": " << c.dump();
        checked += status == "SUCCESS";
      }
    EXPECT_GE(checked, 1) << scenario;
  }
}

TEST(McpServe, TheOfficialSdkClientUsesItOverStdioAndHttp) {
  const fs::path script = mlsb::test::source_dir() / "tests/integration/mcp/sdk_client.mjs";
  if (!fs::exists(mlsb::test::source_dir() / "mcp/servers/node_modules/@modelcontextprotocol/sdk"))
    GTEST_FAIL() << "the SDK is missing: run scripts/setup-deps";
  mlsb::test::TempDir dir;
  const auto check = [](const mlsb::test::CommandResult& r) {
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    const json seen = json::parse(r.out);
    EXPECT_EQ(seen["server"]["name"], "mlsysbench");
    EXPECT_EQ(seen["tools"].size(), 6u);
    EXPECT_NE(std::find(seen["workloads"].begin(), seen["workloads"].end(), "moe_train.layer"), seen["workloads"].end());
    EXPECT_TRUE(seen["missing_is_error"].get<bool>()) << seen;
  };
  check(mlsb::test::run_shell("node " + mlsb::test::shell_quote(script) + " stdio " + mlsb::test::shell_quote(mlsb::test::binary()) +
                        " --db " + mlsb::test::shell_quote(dir / "stdio.db") + " mcp-serve"));
  HttpServe serve(dir / "http.db", dir / "serve.log");
  ASSERT_FALSE(serve.url().empty());
  check(mlsb::test::run_shell("node " + mlsb::test::shell_quote(script) + " http " + serve.url()));
}

}  // namespace
}  // namespace mlsb::mcp
