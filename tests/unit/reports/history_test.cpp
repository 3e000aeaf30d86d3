// Histories and baselines from a real SQLite store: the baseline is taken from the same machine key and
// branch of any git sha, a case not ok in the newest run from its newest ok case, histories refuse selections that match nothing or mix suites, an old
// store migrates, and a stored 10% step is found as a standing regression naming its run.
#include <gtest/gtest.h>

#include <sqlite3.h>

#include <random>

#include "reports/baseline.hpp"
#include "reports/history.hpp"
#include "support/test_support.hpp"
#include "unit/reports/fixtures.hpp"

namespace mlsb::reports {
namespace {

using test::make_case;

struct RunSpec {
  std::string suite = "nightly-gpu", machine = "m-a", branch = "main", sha;
  RunStatus status = RunStatus::Ok;
  double scale = 1.0;  // the case's time multiplier
  std::vector<std::string> tags = {};
  double started = 0;  // unix seconds; 0: now
};

int64_t add_run(Store& store, const RunSpec& spec, uint64_t seed = 1) {
  RunRecord r;
  r.suite = spec.suite;
  r.machine_key = spec.machine;
  r.branch = spec.branch;
  r.git_sha = spec.sha;
  r.status = spec.status;
  r.tags = spec.tags;
  r.env = {{"build_type", "RelWithDebInfo"}};
  r.started_at = spec.started;
  const int64_t id = store.begin_run(r);
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> z(0, 0.005);
  std::vector<double> t, bw;
  for (int i = 0; i < 5; ++i) t.push_back(10 * spec.scale * (1 + z(rng))), bw.push_back(100 / spec.scale * (1 + z(rng)));
  CaseRecord c = make_case("compress", {{"codec", "zstd"}}, {{"time_ms", t}, {"bw", bw}});
  c.label = "codec=zstd";
  store.add_case(id, c);
  CaseRecord d = make_case("compress", {{"codec", "lz4"}}, {{"time_ms", t}});
  d.label = "codec=lz4";
  store.add_case(id, d);
  store.finish_run(id, spec.status);
  return id;
}

TEST(Baseline, AutoPicksTheNewestCleanRunOfTheSameMachineBranchAndSuiteOfAnyCommit) {
  mlsb::test::TempDir dir;
  Store store(dir / "r.db");
  std::vector<int64_t> ids;
  for (int i = 0; i < 8; ++i)  // machine keys alternate: a, b, a, b, ...
    ids.push_back(add_run(store, {.machine = i % 2 ? "m-b" : "m-a", .sha = "sha" + std::to_string(i)}));
  add_run(store, {.machine = "m-a", .sha = "sha8", .status = reports::RunStatus::Failed});  // not ok: never a baseline
  add_run(store, {.machine = "m-a", .branch = "feature", .sha = "sha9"});  // another branch
  add_run(store, {.suite = "smoke", .machine = "m-a", .sha = "sha10"});    // another suite
  const int64_t same_sha = add_run(store, {.machine = "m-a", .sha = "sha12"});
  const int64_t cand_id = add_run(store, {.machine = "m-a", .sha = "sha12"});
  const RunRecord cand = store.load_run(cand_id).run;
  const auto ref = find_reference(store, cand, 30);
  ASSERT_TRUE(ref);
  EXPECT_EQ(ref->base.run.id, same_sha);  // an unchanged commit is judged too; not the failed run, branch or suite
  EXPECT_EQ(ref->base.run.machine_key, "m-a");
  for (const auto& c : ref->base.cases) EXPECT_EQ(c.run_id, same_sha);
  const auto history = comparable_runs(store, cand, 30);
  ASSERT_EQ(history.size(), 5u);  // sha12, sha6, sha4, sha2, sha0 on m-a
  for (const auto& r : history) EXPECT_EQ(r.machine_key, "m-a");
  // On machine b the newest run of b is the baseline; a run without a key has no baseline at all.
  const auto on_b = find_reference(store, store.load_run(ids[7]).run);
  ASSERT_TRUE(on_b);
  EXPECT_EQ(on_b->base.run.id, ids[5]);
  const int64_t keyless = add_run(store, {.machine = "", .sha = "sha13"});
  EXPECT_FALSE(find_reference(store, store.load_run(keyless).run));
  EXPECT_NE(no_baseline_note(store, store.load_run(keyless).run).find("no baseline yet"), std::string::npos);
  // The environments differ in the machine key only.
  const auto diff = environment_differences(store.load_run(ids[0]).run, store.load_run(ids[1]).run);
  ASSERT_EQ(diff.size(), 1u);
  EXPECT_EQ(diff[0], "machine key: m-a -> m-b");
  // Medians for the t-test: one per run and case and metric, newest first.
  const auto& medians = ref->history.at(case_pair_key("compress", "codec=zstd", "local", 1) + "\ntime_ms");
  EXPECT_EQ(medians.size(), 5u);
  const RunData newest = store.load_run(same_sha);
  for (const auto& row : newest.cases[0].summaries) {
    if (row.metric != "time_ms") continue;
    EXPECT_EQ(medians.front(), row.stats.median);
  }
}

TEST(Baseline, ACaseNotOkInTheNewestRunIsJudgedAgainstItsNewestOkCase) {
  mlsb::test::TempDir dir;
  Store store(dir / "r.db");
  const int64_t older = add_run(store, {.sha = "1"});
  RunRecord r;
  r.suite = "nightly-gpu", r.machine_key = "m-a", r.branch = "main", r.git_sha = "2", r.status = RunStatus::Ok;
  const int64_t newest = store.begin_run(r);
  CaseRecord ok = make_case("compress", {{"codec", "zstd"}}, {{"time_ms", {10, 10.1, 9.9}}});
  store.add_case(newest, ok);
  CaseRecord failed = make_case("compress", {{"codec", "lz4"}}, {}, CaseStatus::Failed, "verification");
  store.add_case(newest, failed);
  store.finish_run(newest, RunStatus::Ok);
  const int64_t cand = add_run(store, {.sha = "3"});
  const auto ref = find_reference(store, store.load_run(cand).run);
  ASSERT_TRUE(ref);
  EXPECT_EQ(ref->base.run.id, newest);
  ASSERT_EQ(ref->base.cases.size(), 2u);
  EXPECT_EQ(ref->base.cases[0].run_id, newest);
  EXPECT_EQ(ref->base.cases[1].run_id, older);  // lz4 failed in the newest run: its newest ok case
  EXPECT_EQ(ref->base.cases[1].status, CaseStatus::Ok);
}

TEST(Baseline, TagTildeNamesTheRunsBeforeTheNewestWithTheTag) {
  mlsb::test::TempDir dir;
  Store store(dir / "r.db");
  const int64_t a = add_run(store, {.sha = "1", .tags = {"nightly"}});
  add_run(store, {.sha = "2", .tags = {"other"}});
  const int64_t c = add_run(store, {.sha = "3", .tags = {"nightly"}});
  EXPECT_EQ(store.resolve_run("nightly"), c);
  EXPECT_EQ(store.resolve_run("nightly~0"), c);
  EXPECT_EQ(store.resolve_run("nightly~1"), a);
  EXPECT_FALSE(store.resolve_run("nightly~2"));
}

TEST(History, RefusesSelectionsThatMatchNothingAndNamesWhatIsThere) {
  mlsb::test::TempDir dir;
  Store store(dir / "r.db");
  const auto error = [&](const HistoryQuery& q) {
    try {
      load_history(store, q);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error({}).find("holds no finished run"), std::string::npos);
  add_run(store, {.sha = "1"});
  EXPECT_NE(error({}).find("a history needs 2 runs or more; 1 run matches"), std::string::npos) << error({});
  add_run(store, {.sha = "2"});
  add_run(store, {.suite = "smoke", .sha = "3"});
  EXPECT_NE(error({}).find("choose it with --suite"), std::string::npos) << error({});
  EXPECT_NE(error({.suite = "smoke"}).find("1 run matches"), std::string::npos);
  const std::string machine = error({.suite = "nightly-gpu", .machine = "m-z"});
  EXPECT_NE(machine.find("no run matches --machine m-z (machines: 'm-a' (2 runs))"), std::string::npos) << machine;
  const std::string branch = error({.suite = "nightly-gpu", .branch = "dev"});
  EXPECT_NE(branch.find("--branch 'dev' (branches: 'main' (2 runs))"), std::string::npos) << branch;
  EXPECT_NE(error({.suite = "nope"}).find("no run matches --suite 'nope' (suites:"), std::string::npos);
  EXPECT_NE(error({.suite = "nightly-gpu", .filter = "("}).find("not a valid regular expression"), std::string::npos);
  EXPECT_NE(error({.suite = "nightly-gpu", .filter = "moe_train"}).find("no ok case matching --filter"), std::string::npos);
  EXPECT_NE(error({.suite = "nightly-gpu", .metric = "nope"}).find("with metric 'nope'"), std::string::npos);
  const History h = load_history(store, {.suite = "nightly-gpu"});
  EXPECT_EQ(h.runs.size(), 2u);
  EXPECT_EQ(h.series.size(), 2u);  // the primary metric of each case
  EXPECT_EQ(h.series[0].name, "compress/codec=zstd");
  EXPECT_EQ(load_history(store, {.suite = "nightly-gpu", .metric = "all"}).series.size(), 3u);
}

TEST(History, FindsAStoredStepAndNamesTheRunWhereItStarted) {
  mlsb::test::TempDir dir;
  Store store(dir / "r.db");
  std::vector<int64_t> ids;
  for (int i = 0; i < 30; ++i)
    ids.push_back(add_run(store, {.sha = "sha" + std::to_string(i), .scale = i >= 20 ? 1.10 : 1.0}, 100 + i));
  History h = load_history(store, {.suite = "nightly-gpu"});
  detect_history(h, {});
  const auto regs = standing_regressions(h);
  ASSERT_EQ(regs.size(), 2u);  // zstd and lz4 both slowed down
  EXPECT_EQ(regs[0].first_run->id, ids[20]);
  EXPECT_EQ(regs[0].last_good->git_sha, "sha19");
  EXPECT_EQ(regs[0].first_run->git_sha, "sha20");
  EXPECT_NEAR(regs[0].step->change, 0.10, 0.02);
  for (const char* format : {"text", "json", "md", "html"}) {
    const std::string out = render_history(h, format);
    EXPECT_NE(out.find("sha19"), std::string::npos) << format;
  }
  const std::string html = render_history(h, "html");
  EXPECT_NE(html.find("class=\"step regression\""), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_THROW(render_history(h, "pdf"), std::invalid_argument);
  // --last 5 sees only the new level: nothing to report.
  History recent = load_history(store, {.suite = "nightly-gpu", .last = 5});
  detect_history(recent, {});
  EXPECT_TRUE(standing_regressions(recent).empty());
}

TEST(History, RunsStoredOutOfOrderAreReadInTimeOrder) {
  // Runs restored from CI artifacts newest first: history and baselines follow their start times.
  mlsb::test::TempDir dir;
  Store store(dir / "r.db");
  for (int i = 29; i >= 0; --i)
    add_run(store, {.sha = "sha" + std::to_string(i), .scale = i >= 20 ? 1.10 : 1.0, .started = 1767225600.0 + 86400 * i},
            100 + i);
  History h = load_history(store, {.suite = "nightly-gpu"});
  ASSERT_EQ(h.runs.size(), 30u);
  EXPECT_EQ(h.runs.front().git_sha, "sha0");
  detect_history(h, {});
  const auto regs = standing_regressions(h);
  ASSERT_EQ(regs.size(), 2u);
  EXPECT_EQ(regs[0].first_run->git_sha, "sha20");
  const RunRecord newest = h.runs.back();
  const auto ref = find_reference(store, newest);
  ASSERT_TRUE(ref);
  EXPECT_EQ(ref->base.run.git_sha, "sha28");
  EXPECT_THROW(detect_history(h, {.threshold = NAN}), std::invalid_argument);
}

TEST(History, AStoreFromBeforeMachineKeysMigratesAndItsRunsAreTheirOwnMachine) {
  mlsb::test::TempDir dir;
  const auto path = dir / "old.db";
  {
    Store store(path);
    add_run(store, {.machine = "", .sha = "1"});
    add_run(store, {.machine = "", .sha = "2"});
  }
  {  // take it back to schema 1, as a store written before this migration
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    for (const char* sql : {"DROP INDEX runs_by_machine", "ALTER TABLE runs DROP COLUMN machine_key",
                            "ALTER TABLE runs DROP COLUMN branch", "ALTER TABLE runs DROP COLUMN ci_json",
                            "ALTER TABLE cases DROP COLUMN gpu_json", "ALTER TABLE cases DROP COLUMN throttled",
                            "ALTER TABLE runs DROP COLUMN pid", "ALTER TABLE runs DROP COLUMN host",
                            "ALTER TABLE runs DROP COLUMN reason", "ALTER TABLE runs DROP COLUMN selection_json",
                            "ALTER TABLE runs DROP COLUMN partial", "ALTER TABLE runs DROP COLUMN suspect",
                            "ALTER TABLE runs DROP COLUMN confirms", "ALTER TABLE summaries DROP COLUMN deterministic",
                            "UPDATE schema_version SET version = 1"})
      ASSERT_EQ(sqlite3_exec(db, sql, nullptr, nullptr, nullptr), SQLITE_OK) << sql << ": " << sqlite3_errmsg(db);
    sqlite3_close(db);
  }
  std::filesystem::permissions(path, std::filesystem::perms::owner_read | std::filesystem::perms::group_read);
  EXPECT_THROW(Store(path, /*read_only=*/true), StoreError);  // a read-only file cannot be migrated
  std::filesystem::permissions(path, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  Store store(path, /*read_only=*/true);  // a reader of a file it may write migrates it
  const auto runs = store.list_runs();
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].machine_key, "");
  EXPECT_EQ(store.load_run(runs[0].id).cases.size(), 2u);
  EXPECT_FALSE(find_reference(store, runs[0]));
  try {
    load_history(store, {});
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("machine (none recorded)"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace mlsb::reports
