// The stdio transport against small fake servers that misbehave on purpose (fakes/*.mjs).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cerrno>

#include "integration/mcp/mcp_test_helpers.hpp"
#include "mcp/client.hpp"
#include "support/test_support.hpp"

namespace mlsb::mcp::test {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

ClientOptions with_timeout(std::chrono::milliseconds timeout) {
  ClientOptions options;
  options.request_timeout = timeout;
  return options;
}

std::string contents(const std::filesystem::path& p) {
  return std::filesystem::exists(p) ? mlsb::test::read_file(p) : "";
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

}  // namespace
}  // namespace mlsb::mcp::test
