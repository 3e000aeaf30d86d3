// Importing our own JSON report: a round trip through render_json, the store and back, and the refusals
// (not JSON, another schema, missing samples, a non-number sample, a uuid already stored, a failed write).
#include <gtest/gtest.h>

#include <cmath>
#include <tuple>

#include "util/json_file.hpp"
#include "reports/import_json.hpp"
#include "reports/render.hpp"
#include "support/test_support.hpp"
#include "unit/reports/fixtures.hpp"

namespace mlsb::reports {
namespace {

using mlsb::test::TempDir;

// The fixture's JSON report, as a document to edit.
nlohmann::json fixture_report() { return nlohmann::json::parse(render(test::fixture_run_nightly(), Format::Json)); }

// Writes `report` to DIR/r.json and expects read_json_report to refuse it with a message naming the file and
// containing `expected`.
void expect_refused(const TempDir& dir, const std::string& text, const std::string& expected) {
  const auto file = dir / "r.json";
  mlsb::test::write_file(file, text);
  try {
    read_json_report(file);
    ADD_FAILURE() << "accepted; expected an error with: " << expected;
  } catch (const std::exception& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(file.string()), std::string::npos) << what;
    EXPECT_NE(what.find(expected), std::string::npos) << what;
  }
}

TEST(ImportJsonTest, RoundTripsEveryFieldThroughTheReportAndTheStore) {
  TempDir dir;
  const RunData original = test::fixture_run_nightly();
  mlsb::test::write_file(dir / "r.json", render(original, Format::Json));
  RunData data = read_json_report(dir / "r.json");
  Store store(dir / "r.db");
  const int64_t id = store_imported_run(store, data);
  EXPECT_EQ(id, data.run.id);
  const RunData read = store.load_run(id);

  const auto run_fields = [](const RunRecord& r) {  // every field but the id
    return std::tie(r.uuid, r.suite, r.status, r.argv, r.tags, r.seed, r.git_sha, r.git_dirty, r.started_at,
                    r.finished_at, r.env, r.machine_key, r.branch, r.ci);
  };
  EXPECT_EQ(run_fields(read.run), run_fields(original.run));
  ASSERT_EQ(read.cases.size(), original.cases.size());
  for (size_t i = 0; i < read.cases.size(); ++i) {
    SCOPED_TRACE(i);
    test::expect_same_case(read.cases[i], original.cases[i]);
  }
  EXPECT_TRUE(read.cases[1].throttled);
}

TEST(ImportJsonTest, AcceptsAReportWrittenBeforeTheNightlyFieldsWereAdded) {
  TempDir dir;
  nlohmann::json report = fixture_report();
  for (const char* key : {"machine_key", "branch", "ci"}) report["run"].erase(key);
  for (auto& c : report["cases"]) {
    c.erase("gpu");
    c.erase("throttled");
  }
  mlsb::test::write_file(dir / "r.json", report.dump());
  const RunData data = read_json_report(dir / "r.json");
  EXPECT_EQ(data.run.machine_key, "");
  EXPECT_EQ(data.run.ci, nlohmann::json::object());
  EXPECT_FALSE(data.cases[1].throttled);
  EXPECT_EQ(data.cases[0].gpu, nlohmann::json::object());
}

TEST(ImportJsonTest, RefusesBadReportsNamingTheFileAndTheField) {
  TempDir dir;
  expect_refused(dir, "{\"schema\": ", "not valid JSON");
  expect_refused(dir, "[1, 2]", "not an mlsysbench JSON report");
  expect_refused(dir, "{\"benchmarks\": []}", "no \"schema\"");

  nlohmann::json report = fixture_report();
  report["schema"] = "mlsysbench.report/2";
  expect_refused(dir, report.dump(), "schema is \"mlsysbench.report/2\"; this build imports \"mlsysbench.report/1\"");

  report = fixture_report();
  report["cases"][0]["samples"].erase("bw");
  expect_refused(dir, report.dump(), "cases[0].summaries.bw: no samples");

  report = fixture_report();
  report["cases"][0]["samples"]["time_ms"][3] = nullptr;
  expect_refused(dir, report.dump(), "cases[0].samples.time_ms[3]: expected a number, got null");

  report = fixture_report();
  report["cases"][0]["samples"]["time_ms"][1] = "10.5";
  expect_refused(dir, report.dump(), "cases[0].samples.time_ms[1]: expected a number, got string");

  report = fixture_report();
  report["cases"][2].erase("status");
  expect_refused(dir, report.dump(), "cases[2].status: missing");

  report = fixture_report();
  report["run"]["status"] = "done";
  expect_refused(dir, report.dump(), "run.status: 'done' is not one of ok, failed, interrupted");

  report = fixture_report();
  report["run"]["status"] = "running";  // an unfinished run is no result to import
  expect_refused(dir, report.dump(), "run.status: 'running' is not one of ok, failed, interrupted");

  report = fixture_report();
  report["cases"][0]["primary_metric"] = "nosuch";  // a primary metric a comparison could never see get worse
  expect_refused(dir, report.dump(), "cases[0].primary_metric: 'nosuch' has no samples in this ok case");

  report = fixture_report();
  report["cases"][0]["samples"]["bogus"] = {1.0, 2.0};
  expect_refused(dir, report.dump(), "cases[0].samples.bogus: has no summary");

  report = fixture_report();
  report["run"]["seed"] = -1;
  expect_refused(dir, report.dump(), "run.seed: expected an unsigned integer");

  report = fixture_report();
  report["cases"][0]["ranks"] = 0;
  expect_refused(dir, report.dump(), "cases[0].ranks: expected at least 1, got 0");

  report = fixture_report();
  report["cases"][0]["summaries"]["bw"]["better"] = "faster";
  expect_refused(dir, report.dump(), "cases[0].summaries.bw.better: 'faster' is not one of lower, higher");

  report = fixture_report();
  report["cases"][4]["items"][1].erase("data");
  expect_refused(dir, report.dump(), "cases[4].items[1].data: missing");
}

TEST(ImportJsonTest, RefusesARunAlreadyStoredAndChangesNothing) {
  TempDir dir;
  mlsb::test::write_file(dir / "r.json", render(test::fixture_run_nightly(), Format::Json));
  Store store(dir / "r.db");
  RunData first = read_json_report(dir / "r.json");
  store_imported_run(store, first);
  RunData again = read_json_report(dir / "r.json");
  again.run.tags.push_back("again");
  try {
    store_imported_run(store, again);
    FAIL() << "imported the same run twice";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("run " + first.run.uuid + " is already in"), std::string::npos) << e.what();
  }
  const auto runs = store.list_runs();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].tags, first.run.tags);
  EXPECT_EQ(store.load_run(first.run.id).cases.size(), first.cases.size());
}

TEST(ImportJsonTest, AFailedWriteLeavesNoPartOfTheRun) {
  TempDir dir;
  Store store(dir / "r.db");
  RunData data = test::fixture_run_nightly();
  data.cases[4].samples["time_ms"][0] = std::nan("");  // the store refuses the last case
  EXPECT_THROW(store_imported_run(store, data), StoreError);
  EXPECT_TRUE(store.list_runs().empty());
  EXPECT_FALSE(store.run_id_by_uuid(data.run.uuid));
}

}  // namespace
}  // namespace mlsb::reports
