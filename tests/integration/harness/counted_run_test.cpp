// `run --measure instructions` under the real valgrind: the run re-executes itself under callgrind and
// stores each sample's counted instructions (deterministic, the primary metric) with the simulated cache
// metrics and none of the workload's wall-clock ones; two runs of one commit repeat the count; the test
// knob's 10% and 2% more work fail the gate; what cannot be counted is refused (exit 2) or skipped, with
// the reason; a suite whose entries differ in "measure" times some cases and counts the others.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "support/test_support.hpp"

namespace mlsb {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;
using test::shell_quote;

constexpr const char* kCases = "run compress.codec -p codec=lz4,int8-block -p elements=65536 --measure instructions";

bool have_valgrind() { return test::run_shell("valgrind --version").exit_code == 0; }

// mlsysbench with `env` (VAR=value ...) set, as commit `sha`.
test::CommandResult counted(const fs::path& db, const std::string& sha, const std::string& args,
                            const std::string& env = "") {
  return test::run_shell("env MLSB_GIT_SHA=" + sha + " " + env + " " + shell_quote(test::binary()) + " --db " +
                         shell_quote(db) + " " + args);
}

nlohmann::json report(const fs::path& db, const std::string& run) {
  return nlohmann::json::parse(test::run_cli(db, "report " + run + " --format json").out);
}

double median_of(const nlohmann::json& c, const std::string& metric) { return c["summaries"][metric]["median"]; }

TEST(CountedRun, StoresDeterministicInstructionsThatOneCommitRepeats) {
  if (!have_valgrind()) GTEST_SKIP() << "valgrind absent (scripts/setup-deps installs it)";
  test::TempDir dir;
  const fs::path db = dir / "c.db";
  for (int i = 0; i < 2; ++i) {
    const auto r = counted(db, std::string(40, 'a'), kCases);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_THAT(r.err, HasSubstr("counting instructions under callgrind"));
  }
  const auto a = report(db, "1"), b = report(db, "2");
  EXPECT_EQ(a["env"]["instrument"]["tool"], "callgrind");
  EXPECT_EQ(a["env"]["instrument"]["caches"]["LL"], "8388608,16,64");
  ASSERT_EQ(a["cases"].size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    const auto& c = a["cases"][i];
    EXPECT_EQ(c["primary_metric"], "instructions");
    EXPECT_EQ(c["summaries"]["instructions"]["n"], 3);  // a fixed sample count
    EXPECT_EQ(c["summaries"]["instructions"]["deterministic"], true);
    EXPECT_TRUE(c["summaries"].contains("est_cycles") && c["summaries"].contains("ll_miss_rate"));
    EXPECT_FALSE(c["summaries"].contains("compress_ms")) << c["summaries"].dump();  // no wall clock
    const double x = median_of(c, "instructions"), y = median_of(b["cases"][i], "instructions");
    EXPECT_GT(x, 1e5);
    EXPECT_LE(std::fabs(x / y - 1), 1e-3) << x << " vs " << y;  // CompareOptions::determinism_tolerance
  }
  const auto cmp = test::run_cli(db, "compare 1 2 --fail-on-regression");
  EXPECT_EQ(cmp.exit_code, 0) << cmp.out << cmp.err;
  EXPECT_THAT(mlsb::test::unwrapped(cmp.out), HasSubstr("(a counted metric: the threshold alone)"));
}

TEST(CountedRun, TheExtraWorkKnobsTenAndTwoPercentFailTheGate) {
  if (!have_valgrind()) GTEST_SKIP() << "valgrind absent (scripts/setup-deps installs it)";
  test::TempDir dir;
  const fs::path db = dir / "c.db";
  ASSERT_EQ(counted(db, std::string(40, 'a'), kCases).exit_code, 0);
  for (const char* extra : {"0.10", "0.02"}) {
    const auto slow = counted(db, std::string(40, 'b'), kCases, std::string("MLSB_TEST_EXTRA_WORK=") + extra);
    ASSERT_EQ(slow.exit_code, 0) << slow.err;
    const auto gate = test::run_cli(db, "compare 1 latest --fail-on-regression -f json");
    EXPECT_EQ(gate.exit_code, 1) << extra << gate.err;
    for (const auto& m : nlohmann::json::parse(gate.out)["metrics"]) {
      if (m["metric"] != "instructions") continue;
      EXPECT_NEAR(m["ratio"].get<double>(), 1 + std::stod(extra), 0.004) << extra;
    }
    ASSERT_EQ(test::run_cli(db, "db rm latest").exit_code, 0);
  }
}

TEST(CountedRun, WhatCannotBeCountedIsRefusedOrSkippedWithTheReason) {
  test::TempDir dir;
  const fs::path db = dir / "c.db";
  const auto refused = [&](const std::string& args, const std::string& why, const std::string& env = "") {
    const auto r = counted(db, "x", args, env);
    EXPECT_EQ(r.exit_code, 2) << args;
    EXPECT_THAT(r.err, HasSubstr(why)) << args;
  };
  refused(std::string(kCases) + " --backend cuda", "not with --backend cuda");
  refused(std::string(kCases) + " --max-time 5", "a time-based stopping rule (--max-time)");
  refused(std::string(kCases) + " --comm mpi", "counts one process");
  refused(kCases, "install the Debian package 'valgrind'", "PATH=/nonexistent");
  // A valgrind too old for the client requests the runner uses.
  test::write_file(dir / "old" / "valgrind", "#!/bin/sh\necho valgrind-3.13.0\n");
  fs::permissions(dir / "old" / "valgrind", fs::perms::owner_all);
  refused(kCases, "needs valgrind 3.15 or newer", "PATH=" + shell_quote(dir / "old") + ":/usr/bin:/bin");
  EXPECT_FALSE(fs::exists(db));  // nothing was stored
  test::write_file(dir / "s.json", R"({"name": "s", "measure": "bogus", "cases": [{"workload": "compress.codec"}]})");
  refused("run " + shell_quote(dir / "s.json"), "measure: expected \"time\" or \"instructions\"");
  if (!have_valgrind()) GTEST_SKIP() << "valgrind absent: the skipped-case half needs it";
  // A suite that asks for counting; toolbench's tools run in server processes: skipped, saying so.
  test::write_file(dir / "t.json", R"({"name": "t", "measure": "instructions", "cases": [
    {"workload": "compress.codec", "params": {"codec": "lz4", "elements": 4096}},
    {"workload": "toolbench", "params": {"agent": "oracle"}}]})");
  const auto r = counted(db, "x", "run " + shell_quote(dir / "t.json"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const auto j = report(db, "latest");
  EXPECT_EQ(j["cases"][0]["primary_metric"], "instructions");
  EXPECT_EQ(j["cases"][1]["status"], "skipped");
  EXPECT_THAT(j["cases"][1]["reason"].get<std::string>(), HasSubstr("runs its work in other processes (MCP servers)"));
}

TEST(CountedRun, ASuiteEntryCountsItsCasesWhileTheOthersAreTimed) {
  if (!have_valgrind()) GTEST_SKIP() << "valgrind absent (scripts/setup-deps installs it)";
  test::TempDir dir;
  const fs::path db = dir / "m.db";
  test::write_file(dir / "m.json", R"({"name": "m", "cases": [
    {"workload": "compress.codec", "params": {"codec": "int8-block", "elements": 4096}},
    {"workload": "compress.codec", "params": {"codec": "lz4", "elements": 4096}, "measure": "instructions"}]})");
  const auto r = counted(db, "x", "run " + shell_quote(dir / "m.json") + " --repetitions 3");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = report(db, "latest");
  ASSERT_EQ(j["cases"].size(), 2u);
  EXPECT_EQ(j["cases"][0]["primary_metric"], "time_ms");  // timed natively
  EXPECT_FALSE(j["cases"][0]["summaries"].contains("instructions"));
  EXPECT_EQ(j["cases"][1]["primary_metric"], "instructions");  // counted in a process of its own
  EXPECT_FALSE(j["cases"][1]["summaries"].contains("time_ms"));
  EXPECT_EQ(j["cases"][1]["summaries"]["instructions"]["n"], 3);
  EXPECT_EQ(j["run"]["partial"], false);
  // A counted case that cannot be counted here is skipped with the reason; the timed one still runs.
  const auto skipped = counted(db, "x", "run " + shell_quote(dir / "m.json") + " --max-time 5");
  EXPECT_EQ(skipped.exit_code, 0) << skipped.err;
  j = report(db, "latest");
  EXPECT_EQ(j["cases"][0]["status"], "ok");
  EXPECT_EQ(j["cases"][1]["status"], "skipped");
  EXPECT_THAT(j["cases"][1]["reason"].get<std::string>(), HasSubstr("--max-time"));
}

}  // namespace
}  // namespace mlsb
