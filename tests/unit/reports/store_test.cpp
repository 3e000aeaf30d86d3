// The SQLite results store on real files: round trip, migrations, bad files, concurrency, run references.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <span>

#include "util/process_state.hpp"
#include "reports/render.hpp"
#include "reports/store.hpp"
#include "support/test_support.hpp"
#include "unit/reports/fixtures.hpp"

namespace mlsb::reports {
namespace {

using mlsb::test::TempDir;
using test::expect_same_case;
using test::fixture_run;

RunData store_fixture(Store& store, RunData d = fixture_run()) {
  store.begin_run(d.run);
  for (auto& c : d.cases) store.add_case(d.run.id, c);
  return d;
}

TEST(StoreTest, RoundTripsARunWithCasesSamplesSummariesAndItems) {
  TempDir tmp;
  Store store(tmp / "r.db");
  RunData written = store_fixture(store);
  store.finish_run(written.run.id, RunStatus::Ok);
  const RunData read = store.load_run(written.run.id);
  EXPECT_EQ(read.run.uuid, written.run.uuid);
  EXPECT_EQ(read.run.suite, written.run.suite);
  EXPECT_EQ(read.run.status, reports::RunStatus::Ok);
  EXPECT_GT(read.run.finished_at, 0);
  EXPECT_EQ(read.run.argv, written.run.argv);
  EXPECT_EQ(read.run.tags, written.run.tags);
  EXPECT_EQ(read.run.seed, written.run.seed);
  EXPECT_EQ(read.run.git_sha, written.run.git_sha);
  EXPECT_EQ(read.run.git_dirty, written.run.git_dirty);
  EXPECT_EQ(read.run.env, written.run.env);
  ASSERT_EQ(read.cases.size(), written.cases.size());
  for (size_t i = 0; i < read.cases.size(); ++i) {
    EXPECT_EQ(read.cases[i].id, written.cases[i].id);
    expect_same_case(read.cases[i], written.cases[i]);
  }
}

// A case stored as it runs: "running" with the items added so far, then finished with its results and
// the rest of its items, in order.
TEST(StoreTest, ACaseStoredAsItRunsKeepsItsItemsInOrder) {
  TempDir tmp;
  Store store(tmp / "r.db");
  RunData d = fixture_run();
  store.begin_run(d.run);
  CaseRecord c = d.cases.back();  // the toolbench case: 3 task items
  store.begin_case(d.run.id, c);
  ASSERT_GT(c.id, 0);
  RunData read = store.load_run(d.run.id);
  ASSERT_EQ(read.cases.size(), 1u);
  EXPECT_EQ(read.cases[0].status, reports::CaseStatus::Running);
  EXPECT_TRUE(read.cases[0].items.empty());
  EXPECT_TRUE(read.cases[0].summaries.empty());
  store.add_items(c.id, std::span(c.items).first(2));
  EXPECT_EQ(store.load_run(d.run.id).cases[0].items.size(), 2u);
  c.backend = "cpu";
  store.finish_case(c, 2);
  read = store.load_run(d.run.id);
  ASSERT_EQ(read.cases.size(), 1u);
  expect_same_case(read.cases[0], c);  // status, samples, summaries and the 3 items in order
  EXPECT_THROW(store.finish_case(c, 3), StoreError);  // no longer running
  Store reader(tmp / "r.db", /*read_only=*/true);
  EXPECT_THROW(reader.begin_case(d.run.id, c), StoreError);
  EXPECT_THROW(reader.add_items(c.id, c.items), StoreError);
}

// A run whose process died while a case ran: the next store opened marks the run and that case
// "interrupted" and keeps the items the case had stored.
TEST(StoreTest, ACaseInFlightOfADeadRunIsInterruptedWithItsItems) {
  TempDir tmp;
  const pid_t child = fork();
  if (child == 0) _exit(0);
  ASSERT_GT(child, 0);
  waitpid(child, nullptr, 0);  // a pid that is gone
  RunData d = fixture_run();
  int64_t case_id = 0;
  {
    Store store(tmp / "r.db");
    d.run.status = reports::RunStatus::Running;
    d.run.pid = child;
    d.run.host = host_name();
    store.begin_run(d.run);
    CaseRecord done = d.cases[0];
    store.add_case(d.run.id, done);
    CaseRecord c = d.cases.back();
    store.begin_case(d.run.id, c);
    store.add_items(c.id, c.items);
    case_id = c.id;
  }
  Store reopened(tmp / "r.db", /*read_only=*/true);
  const RunData read = reopened.load_run(d.run.id);
  EXPECT_EQ(read.run.status, reports::RunStatus::Interrupted);
  ASSERT_EQ(read.cases.size(), 2u);
  EXPECT_EQ(read.cases[0].status, reports::CaseStatus::Ok);
  EXPECT_EQ(read.cases[1].id, case_id);
  EXPECT_EQ(read.cases[1].status, reports::CaseStatus::Interrupted);
  EXPECT_NE(read.cases[1].reason.find("killed or crashed while it ran"), std::string::npos) << read.cases[1].reason;
  EXPECT_EQ(read.cases[1].items.size(), 3u);
  EXPECT_GT(read.cases[1].finished_at, 0);
}

// A case left "running" in a run that ended (its finish could not be stored) is settled as interrupted
// by the next store opened, read-only included; its items stay.
TEST(StoreTest, ACaseLeftRunningInAFinishedRunIsInterrupted) {
  TempDir tmp;
  RunData d = fixture_run();
  {
    Store store(tmp / "r.db");
    d.run.status = reports::RunStatus::Running;
    store.begin_run(d.run);
    CaseRecord c = d.cases.back();
    store.begin_case(d.run.id, c);
    store.add_items(c.id, c.items);
    store.finish_run(d.run.id, RunStatus::Failed);
  }
  const RunData read = Store(tmp / "r.db", /*read_only=*/true).load_run(d.run.id);
  EXPECT_EQ(read.run.status, reports::RunStatus::Failed);
  ASSERT_EQ(read.cases.size(), 1u);
  EXPECT_EQ(read.cases[0].status, reports::CaseStatus::Interrupted);
  EXPECT_EQ(read.cases[0].items.size(), 3u);
}

// A path or an input file can put any bytes into parameters, reasons and items: the store keeps the
// case (invalid UTF-8 in JSON columns as U+FFFD) and every report renders, JSON included.
TEST(StoreTest, KeepsCasesWithInvalidUtf8AndEveryReportRenders) {
  TempDir tmp;
  Store store(tmp / "r.db");
  RunData d = fixture_run();
  const std::string bad = "bad\xff\xfe.jsonl";
  d.run.argv = "mlsysbench run -p trace=" + bad;
  d.run.tags = {bad};
  d.run.env["cwd"] = bad;
  d.cases.at(0).params["trace"] = bad;
  d.cases.at(0).reason = "trace " + bad + " line 2: \xc3";
  d.cases.at(0).items.emplace_back("trace", nlohmann::json{{"path", bad}});
  ASSERT_NO_THROW(d = store_fixture(store, d));
  store.finish_run(d.run.id, RunStatus::Ok);
  const RunData read = store.load_run(d.run.id);
  ASSERT_EQ(read.cases.size(), d.cases.size());
  EXPECT_EQ(read.cases[0].params.at("trace"), "bad\ufffd\ufffd.jsonl");
  EXPECT_EQ(read.cases[0].reason, d.cases[0].reason) << "TEXT columns keep the bytes";
  EXPECT_EQ(read.run.tags, std::vector<std::string>{"bad\ufffd\ufffd.jsonl"});
  for (const Format f : {Format::Json, Format::Html, Format::Md, Format::Gbench}) {
    std::string out;
    ASSERT_NO_THROW(out = render(read, f)) << static_cast<int>(f);
    EXPECT_FALSE(out.empty());
  }
  const nlohmann::json report = nlohmann::json::parse(render(read, Format::Json));
  EXPECT_EQ(report.at("cases").at(0).at("reason"), "trace bad\ufffd\ufffd.jsonl line 2: \ufffd");
}

TEST(StoreTest, KeepsFullPrecisionSeedsAndGeneratesAUuid) {
  TempDir tmp;
  Store store(tmp / "r.db");
  RunRecord run;
  run.seed = 0xFFFFFFFFFFFFFFF0ULL;
  store.begin_run(run);
  EXPECT_EQ(run.uuid.size(), 36u);
  EXPECT_EQ(store.load_run(run.id).run.seed, 0xFFFFFFFFFFFFFFF0ULL);
}

TEST(StoreTest, RejectsANanSampleAndStoresNothingOfThatCase) {
  TempDir tmp;
  Store store(tmp / "r.db");
  RunRecord run;
  store.begin_run(run);
  CaseRecord c = test::make_case("w", {{"i", 1}}, {{"time_ms", {1.0, 2.0}}});
  c.samples["time_ms"].push_back(std::nan(""));
  EXPECT_THROW(store.add_case(run.id, c), StoreError);
  EXPECT_TRUE(store.load_run(run.id).cases.empty());
}

TEST(StoreTest, MigratesAnEmptyFileAndReopens) {
  TempDir tmp;
  mlsb::test::write_file(tmp / "empty.db", "");
  { Store store(tmp / "empty.db"); }
  Store again(tmp / "empty.db");
  EXPECT_TRUE(again.list_runs().empty());
  Store reader(tmp / "empty.db", /*read_only=*/true);
  EXPECT_TRUE(reader.list_runs().empty());
  EXPECT_GE(Store::schema_version(), 1);
}

TEST(StoreTest, RejectsASchemaNewerThanTheBuild) {
  TempDir tmp;
  { Store store(tmp / "new.db"); }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((tmp / "new.db").c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "UPDATE schema_version SET version = 999", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  try {
    Store store(tmp / "new.db");
    FAIL() << "expected StoreError";
  } catch (const StoreError& e) {
    EXPECT_NE(std::string(e.what()).find("newer"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("new.db"), std::string::npos) << e.what();
  }
}

TEST(StoreTest, RejectsAFileThatIsNotSqliteAndLeavesItAlone) {
  TempDir tmp;
  const std::string text = "name,value\nthis is a CSV file, not a database\n";
  mlsb::test::write_file(tmp / "notes.csv", text);
  for (bool read_only : {false, true}) {
    try {
      Store store(tmp / "notes.csv", read_only);
      FAIL() << "expected StoreError";
    } catch (const StoreError& e) {
      EXPECT_NE(std::string(e.what()).find((tmp / "notes.csv").string() + " is not an SQLite database"),
                std::string::npos)
          << e.what();
    }
  }
  EXPECT_EQ(mlsb::test::read_file(tmp / "notes.csv"), text);
}

TEST(StoreTest, RejectsWritingAReadOnlyFileAndKeepsItsRuns) {
  TempDir tmp;
  const auto path = tmp / "ro.db";
  int64_t run_id = 0;
  {
    Store store(path);
    run_id = store_fixture(store).run.id;
  }
  ASSERT_EQ(::chmod(path.c_str(), 0444), 0);
  try {
    Store store(path);
    FAIL() << "expected StoreError";
  } catch (const StoreError& e) {
    EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("read-only"), std::string::npos) << e.what();
  }
  Store reader(path, /*read_only=*/true);
  EXPECT_EQ(reader.load_run(run_id).cases.size(), fixture_run().cases.size());
}

TEST(StoreTest, TwoProcessesWritingTheSameFileBothComplete) {
  TempDir tmp;
  const auto path = tmp / "shared.db";
  constexpr int kCases = 40;
  const auto write_run = [&](const std::string& tag) {
    Store store(path);
    RunRecord run;
    run.tags = {tag};
    store.begin_run(run);
    for (int i = 0; i < kCases; ++i) {
      CaseRecord c = test::make_case("w", {{"i", i}}, {{"time_ms", std::vector<double>(200, 1.0 + i)}});
      store.add_case(run.id, c);
    }
    store.finish_run(run.id, RunStatus::Ok);
  };
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    try {
      write_run("child");
      ::_exit(0);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "child writer: %s\n", e.what());
      ::_exit(1);
    }
  }
  write_run("parent");
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the child writer failed";
  Store store(path, /*read_only=*/true);
  for (const char* tag : {"child", "parent"}) {
    const auto id = store.resolve_run(tag);
    ASSERT_TRUE(id) << tag;
    const RunData d = store.load_run(*id);
    EXPECT_EQ(d.run.status, reports::RunStatus::Ok);
    EXPECT_EQ(d.cases.size(), size_t{kCases}) << tag;
    EXPECT_EQ(d.cases.back().samples.at("time_ms").size(), 200u);
  }
}

TEST(StoreTest, ResolvesIdsUuidsPrefixesLatestAndTags) {
  TempDir tmp;
  Store store(tmp / "r.db");
  RunRecord a, b, c;
  a.uuid = "aaaa1111-0000-4000-8000-000000000000";
  a.tags = {"baseline"};
  b.uuid = "aaaa2222-0000-4000-8000-000000000000";
  c.uuid = "cccc3333-0000-4000-8000-000000000000";
  c.tags = {"baseline", "nightly"};
  for (auto* r : {&a, &b, &c}) {
    store.begin_run(*r);
    store.finish_run(r->id, RunStatus::Ok);
  }
  EXPECT_EQ(store.resolve_run(std::to_string(b.id)), b.id);
  EXPECT_EQ(store.resolve_run(a.uuid), a.id);
  EXPECT_EQ(store.resolve_run("cccc"), c.id);
  EXPECT_EQ(store.resolve_run("aaaa2"), b.id);
  EXPECT_EQ(store.resolve_run("aaaa"), std::nullopt);  // ambiguous prefix
  EXPECT_EQ(store.resolve_run("latest"), c.id);
  EXPECT_EQ(store.resolve_run("latest~1"), b.id);
  EXPECT_EQ(store.resolve_run("latest~2"), a.id);
  EXPECT_EQ(store.resolve_run("latest~3"), std::nullopt);
  EXPECT_EQ(store.resolve_run("baseline"), c.id);  // newest run with the tag
  EXPECT_EQ(store.resolve_run("nightly"), c.id);
  EXPECT_EQ(store.resolve_run("999"), std::nullopt);
  EXPECT_EQ(store.resolve_run("nope"), std::nullopt);
  EXPECT_EQ(store.resolve_run(""), std::nullopt);
  const auto runs = store.list_runs(2);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].id, c.id);
}

TEST(StoreTest, LatestSkipsRunsStillRunningWhichStayReachableOtherwise) {
  TempDir tmp;
  Store store(tmp / "r.db");
  RunRecord done, failed, running;
  done.status = reports::RunStatus::Ok;
  failed.status = reports::RunStatus::Failed;
  running.uuid = "eeee0000-0000-4000-8000-000000000000";
  running.tags = {"wip"};
  for (auto* r : {&done, &failed, &running}) store.begin_run(*r);
  EXPECT_EQ(store.resolve_run("latest"), failed.id);
  EXPECT_EQ(store.resolve_run("latest~1"), done.id);
  EXPECT_EQ(store.resolve_run("latest~2"), std::nullopt);
  EXPECT_EQ(store.resolve_run(std::to_string(running.id)), running.id);
  EXPECT_EQ(store.resolve_run(running.uuid), running.id);
  EXPECT_EQ(store.resolve_run("eeee"), running.id);
  EXPECT_EQ(store.resolve_run("wip"), running.id);
  store.finish_run(running.id, RunStatus::Interrupted);  // an interrupted run is a (partial) result
  EXPECT_EQ(store.resolve_run("latest"), running.id);
}

TEST(StoreTest, NeverReusesTheIdsOfADeletedRunOrItsCases) {
  TempDir tmp;
  Store store(tmp / "r.db");
  const RunData first = store_fixture(store);
  const RunData deleted = store_fixture(store, [] {
    RunData d = fixture_run();
    d.run.uuid = "deleted";
    return d;
  }());
  ASSERT_TRUE(store.delete_run(deleted.run.id));
  const RunData next = store_fixture(store, [] {
    RunData d = fixture_run();
    d.run.uuid = "next";
    return d;
  }());
  EXPECT_GT(next.run.id, deleted.run.id);
  EXPECT_GT(next.cases.front().id, deleted.cases.back().id);
  EXPECT_EQ(store.resolve_run(std::to_string(deleted.run.id)), std::nullopt);
  {  // also across reopening the file
    Store reopened(tmp / "r.db");
    ASSERT_TRUE(reopened.delete_run(next.run.id));
    RunRecord r;
    EXPECT_GT(reopened.begin_run(r), next.run.id);
  }
  EXPECT_EQ(store.load_run(first.run.id).cases.size(), fixture_run().cases.size());
}

// Reading a store that is not there says so (SQLite's "unable to open database file" does not), and
// creates nothing.
TEST(StoreTest, ReadingAMissingStoreSaysItDoesNotExistYet) {
  TempDir tmp;
  const auto path = tmp.path() / "missing.db";
  try {
    Store store(path, /*read_only=*/true);
    FAIL() << "expected StoreError";
  } catch (const StoreError& e) {
    EXPECT_NE(std::string(e.what()).find(path.string() + " does not exist yet"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(StoreTest, RejectsAnEmptyPathAndADirectoryAtOnce) {
  TempDir tmp;
  for (bool read_only : {false, true}) {
    const auto start = std::chrono::steady_clock::now();
    try {
      Store store(tmp.path(), read_only);
      FAIL() << "expected StoreError";
    } catch (const StoreError& e) {
      EXPECT_NE(std::string(e.what()).find(tmp.path().string() + " is a directory"), std::string::npos) << e.what();
    }
    EXPECT_THROW(Store("", read_only), StoreError);
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 1.0);
  }
  try {
    Store store("");
    FAIL() << "expected StoreError";
  } catch (const StoreError& e) {
    EXPECT_NE(std::string(e.what()).find("empty"), std::string::npos) << e.what();
  }
}

TEST(StoreTest, ErrorsNameTheOperationAndSqlitesReasonButNoSql) {
  TempDir tmp;
  Store store(tmp / "r.db");
  CaseRecord c = test::make_case("w", {{"i", 1}}, {{"time_ms", {1.0}}});
  try {
    store.add_case(/*run_id=*/12345, c);  // no such run: the foreign key rejects the case
    FAIL() << "expected StoreError";
  } catch (const StoreError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find((tmp / "r.db").string() + ": cannot insert case: FOREIGN KEY constraint failed"),
              std::string::npos)
        << what;
    for (const char* sql : {"INSERT", "VALUES", "SELECT"}) EXPECT_EQ(what.find(sql), std::string::npos) << what;
  }
}

TEST(StoreTest, ListsRunSummariesWithCaseCountsNewestFirst) {
  TempDir tmp;
  Store store(tmp / "r.db");
  const RunData full = store_fixture(store);  // 3 ok, 1 failed, 1 skipped
  RunRecord empty;
  empty.uuid = "empty";
  store.begin_run(empty);
  CaseRecord timeout = test::make_case("w", {{"i", 1}}, {}, CaseStatus::Timeout, "over 10 s");
  store.add_case(empty.id, timeout);
  const auto summaries = store.list_run_summaries();
  ASSERT_EQ(summaries.size(), 2u);
  EXPECT_EQ(summaries[0].run.id, empty.id);
  EXPECT_EQ(summaries[0].cases.ok, 0);
  EXPECT_EQ(summaries[0].cases.failed, 1);  // a timeout counts as failed
  EXPECT_EQ(summaries[0].cases.other, 0);
  EXPECT_EQ(summaries[1].run.id, full.run.id);
  EXPECT_EQ(summaries[1].run.tags, full.run.tags);
  EXPECT_EQ(summaries[1].cases.ok, 3);
  EXPECT_EQ(summaries[1].cases.failed, 1);
  EXPECT_EQ(summaries[1].cases.other, 1);
  EXPECT_EQ(store.list_run_summaries(1).size(), 1u);
}

TEST(StoreTest, DeletesARunWithEverythingUnderIt) {
  TempDir tmp;
  Store store(tmp / "r.db");
  const int64_t id = store_fixture(store).run.id;
  const int64_t other = store_fixture(store, [] {
                          RunData d = fixture_run();
                          d.run.uuid = "other";
                          return d;
                        }()).run.id;
  EXPECT_TRUE(store.delete_run(id));
  EXPECT_FALSE(store.delete_run(id));
  EXPECT_THROW(store.load_run(id), StoreError);
  EXPECT_EQ(store.load_run(other).cases.size(), fixture_run().cases.size());
  EXPECT_THROW(store.finish_run(id, RunStatus::Ok), StoreError);
}

}  // namespace
}  // namespace mlsb::reports
