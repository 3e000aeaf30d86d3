// The nightly gate end to end through the real binary and real SQLite files: 30 JSON reports with a 10%
// step, imported, make `history --detect --fail-on-regression` exit 1 naming the run and the git shas
// (the no-step twin exits 0); the history page opens in headless Chromium without console messages and
// marks the step; `compare --baseline auto` says when there is no baseline yet, catches a 2x slowdown,
// and with --strict-env refuses a baseline built differently (exit 3); bad selections exit 2.
#include <gtest/gtest.h>

#include <random>

#include "util/json_parse.hpp"
#include "reports/render.hpp"
#include "support/test_support.hpp"
#include "integration/reports/nightly_runs.hpp"

namespace mlsb::reports {
namespace {

namespace fs = std::filesystem;
using mlsb::test::run_cli;
using mlsb::test::shell_quote;
using mlsb::test::TempDir;

// imported_store(dir, name, runs, scale): night i scaled by scale(i) (a double) or described by it (a Night).
template <class Scale>
fs::path imported_store(const TempDir& dir, const std::string& name, int runs, Scale scale) {
  return test::imported_store(dir, name, runs, [&](int i) { return test::Night{.scale = scale(i)}; });
}

TEST(HistoryCli, DetectsAStepInImportedReportsAndFailsTheGate) {
  TempDir dir;
  const fs::path step = imported_store(dir, "step.db", 30, [](int i) { return i >= 20 ? 1.10 : 1.0; });
  const auto r = run_cli(step, "history --detect --fail-on-regression");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("regression: compress.codec/codec=zstd time_ms: +10"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("from run 21 (2026-01-21 00:00:00 UTC, git c0ffee1019 -> c0ffee1020)"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("standing regressions of primary metrics"), std::string::npos) << r.out;
  const fs::path flat = imported_store(dir, "flat.db", 30, [](int) { return 1.0; });
  const auto ok = run_cli(flat, "history --detect --fail-on-regression");
  EXPECT_EQ(ok.exit_code, 0) << ok.out << ok.err;
  EXPECT_NE(ok.out.find("no standing regression"), std::string::npos) << ok.out;
  const auto json = run_cli(step, "history --detect -f json");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const auto j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j["schema"], "mlsysbench.history/1");
  EXPECT_EQ(j["regressions"].size(), 2u);
  EXPECT_EQ(j["regressions"][0]["first_run_id"], 21);
}

TEST(HistoryCli, TheHistoryPageOpensInChromiumAndMarksTheStep) {
  if (!fs::exists("/usr/bin/chromium")) GTEST_SKIP() << "/usr/bin/chromium absent";
  TempDir dir;
  const fs::path db = imported_store(dir, "step.db", 30, [](int i) { return i >= 20 ? 1.10 : 1.0; });
  const fs::path page = dir / "history.html";
  const auto r = run_cli(db, "history --detect -f html -o " + shell_quote(page));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  TempDir profile;
  const auto dom = mlsb::test::run_shell(
      "timeout 120 /usr/bin/chromium --headless --no-sandbox --disable-gpu --no-first-run "
      "--disable-background-networking --user-data-dir=" + shell_quote(profile.path()) +
      " --enable-logging=stderr --v=0 --window-size=1400,2400 --dump-dom " + shell_quote("file://" + page.string()));
  ASSERT_EQ(dom.exit_code, 0) << dom.err;
  EXPECT_EQ(dom.err.find(":CONSOLE"), std::string::npos) << dom.err;
  EXPECT_NE(dom.out.find("class=\"step regression\""), std::string::npos);
  EXPECT_NE(dom.out.find("run 21 ("), std::string::npos);  // hover titles name run, git sha and date
  EXPECT_NE(dom.out.find("git c0ffee1020"), std::string::npos);
}

TEST(CompareCli, BaselineAutoHistoryAndStrictEnvironment) {
  TempDir dir;
  // One run: no baseline yet, which is no failure.
  const fs::path first = imported_store(dir, "first.db", 1, [](int) { return 1.0; });
  const auto none = run_cli(first, "compare --baseline auto latest --history 30 --fail-on-regression");
  EXPECT_EQ(none.exit_code, 0) << none.err;
  EXPECT_NE(none.err.find("no baseline yet"), std::string::npos) << none.err;
  // Twenty runs of no change, then a candidate twice as slow.
  const fs::path db = imported_store(dir, "gate.db", 21, [](int i) { return i == 20 ? 2.0 : 1.0; });
  const auto slow = run_cli(db, "compare --baseline auto latest --history 30 --fail-on-regression -f json");
  EXPECT_EQ(slow.exit_code, 1) << slow.out << slow.err;
  EXPECT_NE(slow.err.find("baseline: run 20"), std::string::npos) << slow.err;
  EXPECT_NE(slow.err.find("history: 20 comparable run(s)"), std::string::npos) << slow.err;
  const auto j = nlohmann::json::parse(slow.out);
  EXPECT_EQ(j["worse_cases"].size(), 2u);
  // The same comparison of the newest run against the one before it by tag: nightly~1.
  EXPECT_EQ(run_cli(db, "compare nightly~1 nightly --fail-on-regression").exit_code, 1);
  EXPECT_EQ(run_cli(db, "compare nightly~2 nightly~1 --fail-on-regression").exit_code, 0);
  // A candidate built differently: a warning, and exit 3 with --strict-env.
  const fs::path other = dir / "debug.json";
  RunData debug = test::nightly_run(30, test::Night{.build_type = "Debug"});
  mlsb::test::write_file(other, render(debug, Format::Json));
  ASSERT_EQ(run_cli(db, "import json " + shell_quote(other)).exit_code, 0);
  const auto warned = run_cli(db, "compare --baseline auto latest");
  EXPECT_EQ(warned.exit_code, 0) << warned.err;
  EXPECT_NE(warned.err.find("warning: the baseline's environment differs"), std::string::npos) << warned.err;
  EXPECT_NE(warned.err.find("build type: RelWithDebInfo -> Debug"), std::string::npos) << warned.err;
  EXPECT_EQ(run_cli(db, "compare --baseline auto latest --strict-env").exit_code, 3);
  // The HTML comparison is one page, worst first.
  const auto page = run_cli(db, "compare nightly~1 nightly~0 -f html --all");
  EXPECT_EQ(page.exit_code, 0) << page.err;
  EXPECT_NE(page.out.find("<!DOCTYPE html>"), std::string::npos);
  // Usage errors.
  EXPECT_EQ(run_cli(db, "compare latest").exit_code, 2);
  EXPECT_EQ(run_cli(db, "compare latest~1 latest --baseline auto").exit_code, 2);
}

TEST(HistoryCli, BadSelectionsExitTwoAndChangeNothing) {
  TempDir dir;
  const fs::path db = imported_store(dir, "h.db", 3, [](int) { return 1.0; });
  const auto before = mlsb::test::read_file(db);
  const auto machine = run_cli(db, "history --machine nope");
  EXPECT_EQ(machine.exit_code, 2);
  EXPECT_NE(machine.err.find("no run matches --machine nope (machines: 'ci-gpu-1' (3 runs))"), std::string::npos)
      << machine.err;
  const auto branch = run_cli(db, "history --branch dev");
  EXPECT_EQ(branch.exit_code, 2);
  EXPECT_NE(branch.err.find("--branch 'dev'"), std::string::npos) << branch.err;
  const auto one = run_cli(db, "history --last 1");
  EXPECT_EQ(one.exit_code, 2);
  EXPECT_NE(one.err.find("a history needs 2 runs or more"), std::string::npos) << one.err;
  const auto few = run_cli(db, "history --detect");
  EXPECT_EQ(few.exit_code, 0) << few.err;
  EXPECT_NE(few.out.find("not enough history (3 runs"), std::string::npos) << few.out;
  for (const char* tag : {"''", "12", "latest", "nightly~1"})  // names that would read as other run names
    EXPECT_EQ(run_cli(db, std::string("run compress --dry-run --tag ") + tag).exit_code, 2) << tag;
  EXPECT_EQ(run_cli(db, "history --detect --threshold nan").exit_code, 2);
  const auto missing = run_cli(dir / "missing.db", "history");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_FALSE(fs::exists(dir / "missing.db"));
  EXPECT_EQ(mlsb::test::read_file(db), before);
}

}  // namespace
}  // namespace mlsb::reports
