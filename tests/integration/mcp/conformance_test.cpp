// Our MCP client against the official conformance suite (@modelcontextprotocol/conformance 0.1.13,
// pinned in mcp/servers/package.json): each client scenario over Streamable HTTP starts the suite's
// test server, runs mlsb_conformance_client against it and checks what the client did. The auth/*
// scenarios (OAuth) are not run: the client has no OAuth.
#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "support/test_support.hpp"

namespace mlsb {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

fs::path conformance_cli() { return test::npm_bin_dir() / "conformance"; }
fs::path conformance_client() { return fs::path(MLSB_BUILD_DIR) / "mcp" / "conformance" / "mlsb_conformance_client"; }

struct ScenarioResult {
  test::CommandResult run;
  json checks = json::array();  ///< checks.json of the scenario
  std::string failed;           ///< "id: status: message" of every check that is neither SUCCESS nor INFO
};

ScenarioResult run_scenario(const std::string& scenario, const fs::path& client) {
  test::TempDir out;
  ScenarioResult r;
  r.run = test::run_shell(test::shell_quote(conformance_cli()) + " client --command " + test::shell_quote(client) +
                          " --scenario " + scenario + " --timeout 30000 -o " + test::shell_quote(out.path()));
  for (const auto& dir : fs::directory_iterator(out.path()))
    if (fs::exists(dir.path() / "checks.json")) r.checks = json::parse(test::read_file(dir.path() / "checks.json"));
  for (const auto& c : r.checks) {
    const std::string status = c.value("status", "");
    if (status != "SUCCESS" && status != "INFO")
      r.failed += c.value("id", "?") + ": " + status + ": " + c.value("errorMessage", "") + "\n";
  }
  return r;
}

class McpConformance : public ::testing::TestWithParam<const char*> {};

TEST_P(McpConformance, ClientScenarioPasses) {
  ASSERT_TRUE(fs::exists(conformance_cli())) << conformance_cli() << " missing: run scripts/setup-deps";
  const ScenarioResult r = run_scenario(GetParam(), conformance_client());
  EXPECT_EQ(r.run.exit_code, 0) << r.run.out << r.run.err;
  EXPECT_EQ(r.failed, "") << r.run.out;
  int successes = 0;
  for (const auto& c : r.checks) successes += c.value("status", "") == "SUCCESS";
  EXPECT_GE(successes, 1) << "no check passed: " << r.checks.dump(1);
}

INSTANTIATE_TEST_SUITE_P(ClientScenarios, McpConformance,
                         ::testing::Values("initialize", "tools_call", "elicitation-sep1034-client-defaults",
                                           "sse-retry"),
                         [](const auto& info) {
                           std::string name = info.param;
                           for (char& c : name)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return name;
                         });

// The harness sees a failure: a client that does nothing fails the scenario.
TEST(McpConformanceHarness, AClientThatDoesNothingFails) {
  ASSERT_TRUE(fs::exists(conformance_cli())) << conformance_cli() << " missing: run scripts/setup-deps";
  const ScenarioResult r = run_scenario("tools_call", "/bin/true");
  EXPECT_NE(r.run.exit_code, 0);
  EXPECT_NE(r.failed.find("tool-add-numbers: FAILURE"), std::string::npos) << r.failed;
}

}  // namespace
}  // namespace mlsb
