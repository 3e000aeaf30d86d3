// The stdio transport against small fake servers that misbehave on purpose (fakes/*.mjs).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <thread>
#include <vector>

#include "integration/mcp/mcp_test_helpers.hpp"
#include "mcp/client.hpp"
#include "mcp/warnings.hpp"
#include "support/test_support.hpp"

namespace mlsb::mcp::test {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

/// Requests after the handshake time out after `timeout`; the handshake keeps the default, so a server slow to
/// start on a loaded machine does not fail a test about later requests.
ClientOptions with_timeout(std::chrono::milliseconds timeout) {
  ClientOptions options;
  options.request_timeout = timeout;
  return options;
}

/// The handshake itself times out after `timeout`.
ClientOptions with_connect_timeout(std::chrono::milliseconds timeout) {
  ClientOptions options;
  options.connect_timeout = timeout;
  return options;
}

std::string contents(const std::filesystem::path& p) {
  return std::filesystem::exists(p) ? mlsb::test::read_file(p) : "";
}

/// A server `sh -c SCRIPT` that first writes its pid (= its process group) to `pid_file`.
ServerSpec shell_server(const std::string& name, const std::filesystem::path& pid_file, const std::string& script) {
  ServerSpec spec;
  spec.name = name;
  spec.command = {"sh", "-c", "echo $$ > '" + pid_file.string() + "'; " + script};
  return spec;
}

/// Whether ps lists a process of the group named in `pid_file` that is not a zombie.
bool group_alive(const std::filesystem::path& pid_file) {
  std::string pgid = contents(pid_file);
  while (!pgid.empty() && pgid.back() == '\n') pgid.pop_back();
  if (pgid.empty()) return false;
  return std::system(("ps -o stat= -g " + pgid + " | grep -qv '^Z'").c_str()) == 0;
}

TEST(McpStdio, CommandThatDoesNotExistFailsAtConnect) {
  ServerSpec spec;
  spec.name = "ghost";
  spec.command = {"mlsb-no-such-command-xyz", "--flag"};
  const auto start = Clock::now();
  try {
    Client::connect(spec);
    FAIL() << "no McpError";
  } catch (const McpError& e) {
    EXPECT_STREQ(e.what(), "server 'ghost': command 'mlsb-no-such-command-xyz' not found");
  }
  EXPECT_LT(Clock::now() - start, 1s);
}

TEST(McpStdio, ServerExitingMidCallFailsThePendingRequestAtOnce) {
  auto client = Client::connect(fake_spec("exits_mid_call.mjs"), with_timeout(20s));
  const auto start = Clock::now();
  try {
    client->call_tool("anything", nlohmann::json::object());
    FAIL() << "no McpError";
  } catch (const TimeoutError&) {
    FAIL() << "server death reported as a timeout";
  } catch (const McpError& e) {
    EXPECT_NE(std::string(e.what()).find("server 'exits_mid_call.mjs'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("exited with status 3"), std::string::npos) << e.what();
  }
  EXPECT_LT(Clock::now() - start, 3s);
  EXPECT_THROW(client->ping(), McpError);  // later requests fail too, without waiting
}

TEST(McpStdio, ServerThatNeverAnswersTimesOut) {
  auto client = Client::connect(fake_spec("never_answers.mjs"), with_timeout(300ms));
  const auto start = Clock::now();
  EXPECT_THROW(client->call_tool("slow", nlohmann::json::object()), TimeoutError);
  const auto took = Clock::now() - start;
  EXPECT_GE(took, 290ms);
  EXPECT_LT(took, 2s);
}

TEST(McpStdio, ConcurrentCallersEachGetTheirOwnReply) {
  // One thread at a time reads for all (leader/follower): replies come out of order, between the server's
  // notifications and its ping requests, and each caller still gets its own.
  auto client = Client::connect(fake_spec("busy.mjs"), with_timeout(20s));
  constexpr int kThreads = 6, kCalls = 40;
  std::atomic<int> wrong = 0;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kCalls; ++i) {
        const int n = t * 1000 + i;
        if (client->call_tool("t", {{"n", n}}).text() != std::to_string(n)) ++wrong;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(wrong, 0);
}

TEST(McpStdio, AnswersAServerRequestBetweenCalls) {
  // Nobody waits for a reply when the server pings: the background reader answers it.
  auto client = Client::connect(fake_spec("busy.mjs"));
  EXPECT_EQ(client->call_tool("t", {{"arm", true}}).text(), "armed");
  std::this_thread::sleep_for(500ms);
  EXPECT_EQ(client->call_tool("t", {{"report", true}}).text(), "answered");
}

TEST(McpStdio, CloseFailsACallWaitingOnAnotherThreadAtOnce) {
  auto client = Client::connect(fake_spec("never_answers.mjs"), with_timeout(20s));
  std::atomic<bool> calling = false;
  Clock::time_point failed;
  std::string what;
  std::thread caller([&] {
    try {
      calling = true;
      client->call_tool("slow", nlohmann::json::object());
    } catch (const McpError& e) {
      what = e.what();
    }
    failed = Clock::now();
  });
  while (!calling) std::this_thread::yield();
  std::this_thread::sleep_for(200ms);  // the call is sent and its thread reads the server's stdout
  const auto closing = Clock::now();
  client->close();
  caller.join();
  EXPECT_EQ(what, "server 'never_answers.mjs': connection closed (while waiting for 'tools/call')");
  EXPECT_LT(failed - closing, 500ms);
}

TEST(McpStdio, ResponseWithUnknownIdIsLoggedAndIgnored) {
  mlsb::test::TempDir tmp;
  ServerSpec spec = fake_spec("unknown_id.mjs");
  spec.stderr_log = (tmp / "server.log").string();
  auto client = Client::connect(spec);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(client->call_tool("t", nlohmann::json::object()).text(), "right");
  client->close();
  EXPECT_NE(contents(spec.stderr_log).find("unknown id 424242"), std::string::npos) << contents(spec.stderr_log);
}

TEST(McpStdio, NonJsonStdoutLinesAreSkippedWithAWarning) {
  mlsb::test::TempDir tmp;
  ServerSpec spec = fake_spec("noisy_stdout.mjs");
  spec.stderr_log = (tmp / "server.log").string();
  auto client = Client::connect(spec);
  EXPECT_EQ(client->call_tool("t", nlohmann::json::object()).text(), "ok");
  EXPECT_EQ(client->call_tool("t", nlohmann::json::object()).text(), "ok");
  client->close();
  const std::string log = contents(spec.stderr_log);
  EXPECT_NE(log.find("not JSON: Starting noisy server..."), std::string::npos) << log;
  EXPECT_NE(log.find("not JSON: { not json either"), std::string::npos) << log;
  EXPECT_NE(log.find("not JSON: after"), std::string::npos) << log;
}

TEST(McpStdio, AnswersPingAndRefusesUnsupportedServerRequests) {
  auto client = Client::connect(fake_spec("server_requests.mjs"));
  const auto answers = nlohmann::json::parse(client->call_tool("t", nlohmann::json::object()).text());
  EXPECT_EQ(answers["srv-ping"]["result"], nlohmann::json::object());
  EXPECT_EQ(answers["srv-roots"]["error"]["code"], -32601);
}

TEST(McpStdio, NegotiatesAnOlderVersionAndRejectsAnUnknownOne) {
  EXPECT_EQ(Client::connect(fake_spec("server_requests.mjs", {"2025-03-26"}))->protocol_version(), "2025-03-26");
  try {
    Client::connect(fake_spec("server_requests.mjs", {"2030-01-01"}));
    FAIL() << "no McpError";
  } catch (const McpError& e) {
    EXPECT_NE(std::string(e.what()).find("'2030-01-01'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'2025-11-25'"), std::string::npos) << e.what();
  }
}

TEST(McpStdio, PassesCwdAndEnvAndLogsStderr) {
  mlsb::test::TempDir tmp;
  ServerSpec spec = fake_spec("env_and_cwd.mjs");
  spec.cwd = tmp.path().string();
  spec.env = {{"MLSB_FAKE_VALUE", "forty-two"}};
  spec.stderr_log = (tmp / "server.log").string();
  auto client = Client::connect(spec);
  EXPECT_EQ(client->call_tool("t", nlohmann::json::object()).text(),
            std::filesystem::canonical(tmp.path()).string() + "|forty-two");
  client->close();
  EXPECT_NE(contents(spec.stderr_log).find("fake server stderr line"), std::string::npos);
}

TEST(McpStdio, CloseReapsTheServerAndLeaksNoDescriptors) {
  const int before = open_fd_count();
  for (int i = 0; i < 3; ++i) {
    auto client = Client::connect(fake_spec("never_answers.mjs"));
    client->close();
    client->close();  // idempotent
  }
  EXPECT_EQ(open_fd_count(), before);
  errno = 0;
  EXPECT_EQ(::waitpid(-1, nullptr, WNOHANG), -1) << "a child is left (zombie or running)";
  EXPECT_EQ(errno, ECHILD);
}

TEST(McpStdio, StderrFloodNeitherDefeatsTheTimeoutNorFillsTheDisk) {
  mlsb::test::TempDir tmp;
  ServerSpec spec = shell_server("flood", tmp / "pid", "yes errrrrrrr >&2");
  spec.stderr_log = (tmp / "server.log").string();
  const auto start = Clock::now();
  EXPECT_THROW(Client::connect(spec, with_connect_timeout(500ms)), TimeoutError);
  EXPECT_LT(Clock::now() - start, 3s);  // the timeout, then close(): stdin closed, 1 s grace, SIGTERM
  EXPECT_FALSE(group_alive(tmp / "pid")) << "yes survived";
  const std::string log = contents(spec.stderr_log);
  EXPECT_LE(log.size(), kMaxServerLogBytes + 200);
  EXPECT_EQ(log.rfind("errrrrrrr\n", 0), 0u);
  EXPECT_NE(log.find("server 'flood': log reached 4 MiB; dropping the rest"), std::string::npos);
}

TEST(McpStdio, ServerThatDoesNotReadStdinTimesOutOnTheWrite) {
  mlsb::test::TempDir tmp;
  auto client_of = [&] {
    // Answers initialize from a canned line, then never reads again: a large request fills the pipe.
    const std::string init = R"({"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25",)"
                             R"("capabilities":{},"serverInfo":{"name":"x","version":"1"}}})";
    return Client::connect(shell_server("deaf", tmp / "pid", "read line; echo '" + init + "'; exec sleep 1000"),
                           with_timeout(300ms));
  };
  auto client = client_of();
  const auto start = Clock::now();
  EXPECT_THROW(client->call_tool("t", {{"blob", std::string(1 << 20, 'x')}}), TimeoutError);
  EXPECT_LT(Clock::now() - start, 1s);
  client->close();
  EXPECT_FALSE(group_alive(tmp / "pid"));
}

TEST(McpStdio, CloseKillsWhatTheServerStarted) {
  for (const std::string script : {"echo garbage; sleep 1000", "(sleep 1000 &); sleep 1000"}) {
    mlsb::test::TempDir tmp;
    EXPECT_THROW(Client::connect(shell_server("kids", tmp / "pid", script), with_connect_timeout(300ms)),
                 TimeoutError);
    EXPECT_FALSE(group_alive(tmp / "pid")) << script;
  }
}

TEST(McpStdio, DeeplyNestedReplyIsSkippedWithAWarningNotACrash) {
  mlsb::test::TempDir tmp;
  ServerSpec spec = fake_spec("deep_nesting.mjs");
  spec.stderr_log = (tmp / "server.log").string();
  auto client = Client::connect(spec, with_timeout(1s));
  EXPECT_THROW(client->call_tool("deep", nlohmann::json::object()), TimeoutError);
  EXPECT_EQ(client->call_tool("shallow", nlohmann::json::object()).text(), "shallow");
  client->close();
  EXPECT_NE(contents(spec.stderr_log).find("skipping a stdout line that nests JSON deeper than 512 levels"),
            std::string::npos);
}

TEST(McpStdio, OverlongLineEndsTheConnectionWithAClearError) {
  mlsb::test::TempDir tmp;
  const auto start = Clock::now();
  try {
    Client::connect(shell_server("endless", tmp / "pid", "head -c 70000000 /dev/zero | tr '\\0' x; sleep 1000"),
                    with_connect_timeout(20s));
    FAIL() << "no McpError";
  } catch (const TimeoutError& e) {
    FAIL() << e.what();
  } catch (const McpError& e) {
    EXPECT_STREQ(e.what(), "server 'endless': sent a stdout line longer than 64 MiB; closed the connection"
                           " (while waiting for 'initialize')");
  }
  EXPECT_LT(Clock::now() - start, 5s);
  EXPECT_FALSE(group_alive(tmp / "pid"));
}

}  // namespace
}  // namespace mlsb::mcp::test
