// A store written by a build from before compress and moe_train became families of benchmarks
// (tests/data/legacy/store.sql, a dump of a run of tests/data/legacy/suite.json made by c3733b0): its cases
// read back under the benchmarks' names, and compare pairs them case by case with a run of this build of
// the same suite, whose old spelling (`compress` with `mode`) still runs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "support/test_support.hpp"

namespace mlsb {
namespace {

void exec_sql(const std::filesystem::path& db, const std::string& sql) {
  sqlite3* h = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &h), SQLITE_OK);
  char* error = nullptr;
  const int rc = sqlite3_exec(h, sql.c_str(), nullptr, nullptr, &error);
  const std::string message = error ? error : "";
  sqlite3_free(error);
  sqlite3_close(h);
  ASSERT_EQ(rc, SQLITE_OK) << message;
}

std::set<std::string> case_names(const nlohmann::json& report) {
  std::set<std::string> names;
  for (const auto& c : report["cases"]) names.insert(c["workload"].get<std::string>() + "/" + c["label"].get<std::string>());
  return names;
}

TEST(LegacyStore, OldRunsReadBackUnderTheBenchmarksNamesAndCompareCaseByCase) {
  test::TempDir dir;
  const auto db = dir / "r.db";
  const auto data = test::source_dir() / "tests" / "data" / "legacy";
  exec_sql(db, test::read_file(data / "store.sql"));

  const auto old_report = test::run_cli(db, "report legacy --format json");
  ASSERT_EQ(old_report.exit_code, 0) << old_report.err;
  const auto old_json = nlohmann::json::parse(old_report.out);
  const std::set<std::string> expected = {
      "compress.codec/codec=none,elements=65536",
      "compress.codec/codec=zstd,elements=65536",
      "compress.collective/codec=none,elements=4096",
      "compress.plan/link_gbps=12.5,scale=64",
      "moe_train.layer/experts=4,ffn=32,hidden=32,tokens=64",
      "moe_train.lm/batch=2,corpus_mb=0.1,experts=4,ffn=16,hidden=16,seq=16,steps=5"};
  EXPECT_EQ(case_names(old_json), expected);
  for (const auto& c : old_json["cases"]) EXPECT_FALSE(c["params"].contains("mode")) << c.dump();

  const auto fresh = test::run_cli(db, "run " + test::shell_quote(data / "suite.json") + " --tag new");
  ASSERT_EQ(fresh.exit_code, 0) << fresh.err;
  const auto new_report = test::run_cli(db, "report new --format json");
  ASSERT_EQ(new_report.exit_code, 0) << new_report.err;
  EXPECT_EQ(case_names(nlohmann::json::parse(new_report.out)), expected);

  const auto cmp = test::run_cli(db, "compare legacy new --format json");
  ASSERT_EQ(cmp.exit_code, 0) << cmp.err;
  const auto j = nlohmann::json::parse(cmp.out);
  EXPECT_TRUE(j["only_base"].empty()) << j["only_base"].dump();
  EXPECT_TRUE(j["only_cand"].empty()) << j["only_cand"].dump();
  EXPECT_TRUE(j["not_compared"].empty()) << j["not_compared"].dump();
  std::set<std::string> compared;
  for (const auto& m : j["metrics"])
    if (m.value("primary", false)) compared.insert(m["workload"].get<std::string>() + "/" + m["params_key"].get<std::string>());
  EXPECT_EQ(compared.size(), expected.size()) << cmp.out;

  // The history of every metric of every case spans the rename: each series holds both runs. A history
  // holds the runs of one machine and branch; the dump was made on another machine, maybe of another
  // branch, so the old run is moved to the new run's machine and branch first.
  exec_sql(db,
           "UPDATE runs SET machine_key = (SELECT machine_key FROM runs ORDER BY id DESC LIMIT 1), "
           "branch = (SELECT branch FROM runs ORDER BY id DESC LIMIT 1)");
  const auto hist = test::run_cli(db, "history --metric all --format json");
  ASSERT_EQ(hist.exit_code, 0) << hist.err;
  const auto series = nlohmann::json::parse(hist.out)["series"];
  std::set<std::string> workloads;
  for (const auto& s : series) {
    workloads.insert(s["workload"].get<std::string>());
    EXPECT_EQ(s["points"].size(), 2u) << s["name"] << " " << s["metric"];
  }
  EXPECT_EQ(workloads, (std::set<std::string>{"compress.codec", "compress.collective", "compress.plan",
                                              "moe_train.layer", "moe_train.lm"}));
}

}  // namespace
}  // namespace mlsb
