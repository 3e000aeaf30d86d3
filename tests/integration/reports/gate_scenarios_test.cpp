// The scenarios that fooled the nightly gate, as stores of runs rebuilt from our JSON reports and judged by
// the real binary (`compare --baseline auto latest --history 30 --fail-on-regression`): a partial night is
// never the reference, a night the confirming re-run found to be noise (marked suspect) does not hide the
// next night's real regression, a short history still catches 1.5x, a night of an unchanged commit is
// judged, runs of different suites or a run with itself fail the gate, a case missing from a complete
// candidate fails it, and runs with every case skipped or other runner options are no references.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>

#include "integration/reports/nightly_runs.hpp"
#include "reports/store.hpp"

namespace mlsb::reports {
namespace {

namespace fs = std::filesystem;
using mlsb::test::run_cli;
using mlsb::test::TempDir;
using test::Night;

constexpr const char* kGate = "compare --baseline auto latest --history 30 --fail-on-regression -f json";

// The gate's verdict on the newest run of `db`: exit code, the worse case ids, stderr.
struct GateVerdict {
  int exit_code = -1;
  nlohmann::json worse = nlohmann::json::array();
  std::string err, out;
};
GateVerdict gate(const fs::path& db, const std::string& command = kGate) {
  const auto r = run_cli(db, command);
  GateVerdict v{r.exit_code, nlohmann::json::array(), r.err, r.out};
  if (r.out.starts_with("{")) v.worse = nlohmann::json::parse(r.out)["worse_cases"];
  return v;
}

TEST(GateScenarios, APartialNightIsNeverTheReference) {
  TempDir dir;
  const fs::path db = dir / "s.db";
  for (int i = 0; i < 6; ++i) test::import_run(db, test::nightly_run(i, {}));
  test::import_run(db, test::nightly_run(6, {.codecs = {"zstd"}, .partial = true}));  // run --filter zstd
  test::import_run(db, test::nightly_run(7, {.scale = 2.0}));                          // twice as slow
  const auto v = gate(db);
  EXPECT_EQ(v.exit_code, 1) << v.err;
  EXPECT_NE(v.err.find("baseline: run 6 "), std::string::npos) << v.err;  // not run 7, the partial one
  EXPECT_EQ(v.worse.size(), 2u) << v.out;
  EXPECT_NE(mlsb::test::run_cli(db, "db ls").out.find("ok/partial"), std::string::npos);
}

TEST(GateScenarios, ARunMadeWithFilterIsStoredPartialWithWhatItWasTold) {
  TempDir dir;
  const fs::path db = dir / "s.db";
  const std::string run = "run compress.codec -p codec=int8-block,lz4 -p elements=4096 --repetitions 2 ";
  ASSERT_EQ(run_cli(db, run).exit_code, 0);
  const auto filtered = run_cli(db, run + "--filter lz4");
  ASSERT_EQ(filtered.exit_code, 0) << filtered.err;
  const auto j = nlohmann::json::parse(run_cli(db, "report latest --format json").out)["run"];
  EXPECT_EQ(j["partial"], true);
  EXPECT_EQ(j["selection"]["filter"], "lz4");
  EXPECT_EQ(j["selection"]["params"]["codec"], nlohmann::json::array({"int8-block,lz4"}));
  EXPECT_EQ(j["selection"]["runner"]["repetitions"], 2);
  EXPECT_EQ(nlohmann::json::parse(run_cli(db, "report 1 --format json").out)["run"]["partial"], false);
  // --confirms names a stored run; an unknown one is bad input, and nothing is stored.
  const auto bad = run_cli(db, run + "--confirms nope");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--confirms: no run named 'nope'"), std::string::npos) << bad.err;
  const auto confirm = run_cli(db, run + "--filter lz4 --confirms 1");
  ASSERT_EQ(confirm.exit_code, 0) << confirm.err;
  const auto c = nlohmann::json::parse(run_cli(db, "report latest --format json").out)["run"];
  EXPECT_EQ(c["confirms"], nlohmann::json::parse(run_cli(db, "report 1 --format json").out)["run"]["uuid"]);
  EXPECT_EQ(run_cli(db, "db mark 1 --suspect").exit_code, 2);  // a reason is needed
  EXPECT_EQ(run_cli(db, "db mark 1 --suspect why --clear").exit_code, 2);
  EXPECT_EQ(run_cli(db, "db mark 99 --suspect why").exit_code, 2);
  EXPECT_EQ(run_cli(db, "db mark 1 --suspect 'a reason'").exit_code, 0);
  EXPECT_NE(run_cli(db, "db show 1").out.find("suspect:  a reason"), std::string::npos);
  EXPECT_EQ(run_cli(db, "db mark 1 --clear").exit_code, 0);
  EXPECT_EQ(run_cli(db, "db show 1").out.find("suspect:"), std::string::npos);
}

TEST(GateScenarios, AnOldReportMadeWithFilterImportsAsPartial) {
  TempDir dir;
  const fs::path db = dir / "s.db";
  auto j = nlohmann::json::parse(render(test::nightly_run(0, {.partial = true}), Format::Json));
  j["run"].erase("partial");  // as a report from before "partial" existed: only the argv tells
  mlsb::test::write_file(dir / "old.json", j.dump());
  ASSERT_EQ(run_cli(db, "import json " + mlsb::test::shell_quote(dir / "old.json")).exit_code, 0);
  EXPECT_NE(run_cli(db, "db show latest").out.find("partial:  yes"), std::string::npos);
}

TEST(GateScenarios, ASuspectNightDoesNotHideTheNextRealRegression) {
  TempDir dir;
  const auto store = [&](const std::string& name, bool mark) {
    const fs::path db = dir / name;
    for (int i = 0; i < 6; ++i) test::import_run(db, test::nightly_run(i, {}));
    test::import_run(db, test::nightly_run(6, {.scale = 3.3}));  // a transient 3.3x night
    test::import_run(db, test::nightly_run(7, {.confirms = test::night_uuid(6)}));  // its re-run: not worse
    if (mark) {
      const auto m = run_cli(db, "db mark " + test::night_uuid(6) + " --suspect 'not reproduced by its re-run'");
      EXPECT_EQ(m.exit_code, 0) << m.err;
    }
    test::import_run(db, test::nightly_run(8, {.scale = 1.5}));  // a real 1.5x regression
    return db;
  };
  const auto marked = gate(store("marked.db", true));
  EXPECT_EQ(marked.exit_code, 1) << marked.err << marked.out;
  EXPECT_EQ(marked.worse.size(), 2u) << marked.out;
  EXPECT_NE(marked.err.find("run 7 is suspect (not reproduced by its re-run)"), std::string::npos) << marked.err;
  // The control: the same nights without the mark let the transient night hide the regression.
  const auto unmarked = gate(store("unmarked.db", false));
  EXPECT_EQ(unmarked.exit_code, 0) << unmarked.err << unmarked.out;
  EXPECT_NE(unmarked.out.find("within the spread of the last 7 runs"), std::string::npos) << unmarked.out;
}

TEST(GateScenarios, AShortHistoryStillCatchesOnePointFiveTimes) {
  TempDir dir;
  const fs::path db = test::imported_store(dir, "s.db", 4, [](int i) { return Night{.scale = i == 3 ? 1.5 : 1.0}; });
  const auto v = gate(db);
  EXPECT_EQ(v.exit_code, 1) << v.err << v.out;
  EXPECT_EQ(v.worse.size(), 2u) << v.out;
  const auto text = run_cli(db, "compare --baseline auto latest --history 30");
  EXPECT_NE(mlsb::test::unwrapped(text.out).find("with 3 runs of history (the two-run rule until 5), >= "), std::string::npos)
      << text.out;
}

TEST(GateScenarios, ANightOfAnUnchangedCommitIsJudged) {
  TempDir dir;
  const fs::path db =
      test::imported_store(dir, "s.db", 9, [](int i) { return Night{.scale = i == 8 ? 2.0 : 1.0, .sha = "c0ffee42"}; });
  const auto v = gate(db);
  EXPECT_EQ(v.exit_code, 1) << v.err << v.out;
  EXPECT_EQ(v.worse.size(), 2u);
  EXPECT_EQ(nlohmann::json::parse(v.out)["commits"].get<std::string>().rfind("the same (c0ffee42)", 0), 0u) << v.out;
  // What else changed is named: a newer driver under the same commit.
  auto d = test::nightly_run(9, {.sha = "c0ffee42"});
  d.run.env["libraries"]["cuda_driver"] = "13.1";
  test::import_run(db, d);
  EXPECT_NE(gate(db).err.find("GPU driver: 13.0 -> 13.1"), std::string::npos);
}

TEST(GateScenarios, MixedSuitesAndARunWithItselfFailTheGate) {
  TempDir dir;
  const fs::path db = dir / "s.db";
  test::import_run(db, test::nightly_run(0, {.suite = "smoke"}));
  test::import_run(db, test::nightly_run(1, {}));
  const auto mixed = gate(db, "compare 1 2 --fail-on-regression");
  EXPECT_EQ(mixed.exit_code, 1) << mixed.err;
  EXPECT_NE(mixed.err.find("the base is a run of suite 'smoke' and the candidate of suite 'nightly-gpu'"),
            std::string::npos) << mixed.err;
  EXPECT_EQ(gate(db, "compare 1 2 --fail-on-regression --allow-suite-mismatch").exit_code, 0);
  EXPECT_EQ(gate(db, "compare 1 2").exit_code, 0);  // without the gate: a warning
  const auto self = gate(db, "compare latest 2 --fail-on-regression");
  EXPECT_EQ(self.exit_code, 1);
  EXPECT_NE(self.err.find("the same run (2)"), std::string::npos) << self.err;
}

TEST(GateScenarios, ACaseMissingFromACompleteCandidateFailsTheGate) {
  TempDir dir;
  const auto store = [&](const std::string& name, bool partial) {
    const fs::path db = dir / name;
    for (int i = 0; i < 5; ++i) test::import_run(db, test::nightly_run(i, {}));
    test::import_run(db, test::nightly_run(5, {.codecs = {"zstd"}, .partial = partial}));  // lz4 is not there
    return db;
  };
  const auto complete = gate(store("complete.db", false));
  EXPECT_EQ(complete.exit_code, 1) << complete.err;
  EXPECT_NE(complete.err.find("regression: compress.codec/codec=lz4 is ok in the base and missing from the candidate\n"),
            std::string::npos) << complete.err;
  const auto partial = gate(store("partial.db", true));  // a partial run need not hold it
  EXPECT_EQ(partial.exit_code, 0) << partial.err;
  EXPECT_NE(partial.err.find("note: compress.codec/codec=lz4 is ok in the base and missing from the candidate (a partial run)"),
            std::string::npos) << partial.err;
}

TEST(GateScenarios, SkippedRunsAndOtherRunnerOptionsAreNoReference) {
  TempDir dir;
  const fs::path db = dir / "s.db";
  test::import_run(db, test::nightly_run(0, {}));
  test::import_run(db, test::nightly_run(1, {.skipped = true}));                        // ok, every case skipped
  test::import_run(db, test::nightly_run(2, {.runner = {{"repetitions", 1}}}));           // another runner setting
  test::import_run(db, test::nightly_run(3, {.scale = 2.0}));
  const auto v = gate(db);
  EXPECT_EQ(v.exit_code, 1) << v.err;
  EXPECT_NE(v.err.find("baseline: run 1 "), std::string::npos) << v.err;
  // Only runs that cannot serve: a first night's note and exit 0.
  const fs::path lone = dir / "lone.db";
  test::import_run(lone, test::nightly_run(0, {.skipped = true}));
  test::import_run(lone, test::nightly_run(1, {}));
  const auto none = gate(lone);
  EXPECT_EQ(none.exit_code, 0) << none.err;
  EXPECT_NE(none.err.find("no baseline yet"), std::string::npos) << none.err;
}

TEST(GateScenarios, TheGateStatesWhatItCanSee) {
  TempDir dir;
  const fs::path db = test::imported_store(dir, "s.db", 21, [](int) { return Night{}; });
  const auto v = gate(db);
  ASSERT_EQ(v.exit_code, 0) << v.err;
  const auto j = nlohmann::json::parse(v.out);
  for (const auto& m : j["metrics"]) {
    ASSERT_TRUE(m["detectable"].is_number()) << m.dump();
    // 1% run-to-run noise, 20 runs: a step of about 4% is caught (t at p 0.01 and the 5% threshold).
    EXPECT_GT(m["detectable"].get<double>(), 0.05);
    EXPECT_LT(m["detectable"].get<double>(), 0.10);
  }
  const auto text = run_cli(db, "compare --baseline auto latest --history 30");
  EXPECT_NE(text.out.find("What the gate can see"), std::string::npos) << text.out;
  EXPECT_NE(mlsb::test::unwrapped(text.out).find("with 20 runs of history, >= "), std::string::npos) << text.out;
}

TEST(GateScenarios, ImportsOutOfOrderAreJudgedInTimeOrder) {
  // 40 nights imported from their JSON reports in a shuffled order (as artifacts of several machines or a
  // rebuilt store arrive), 20% slower from night 30 on: the history follows the nights' start times, and
  // the step is named by the run that started it and its date, not by the order of storing.
  TempDir dir;
  const fs::path db = dir / "s.db";
  std::vector<int> order(40);
  for (int i = 0; i < 40; ++i) order[static_cast<size_t>(i)] = i;
  std::shuffle(order.begin(), order.end(), std::mt19937(7));
  for (const int i : order) test::import_run(db, test::nightly_run(i, {.scale = i >= 30 ? 1.2 : 1.0}));
  const auto r = run_cli(db, "history --suite nightly-gpu --detect --fail-on-regression");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.out.find("40 runs, 2026-01-01 00:00:00 .. 2026-02-09 00:00:00 UTC"), std::string::npos) << r.out;
  Store store(db, true);
  const std::string night30 = std::to_string(*store.run_id_by_uuid(test::night_uuid(30)));
  EXPECT_NE(r.err.find("from run " + night30 + " (2026-01-31 00:00:00 UTC"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace mlsb::reports
