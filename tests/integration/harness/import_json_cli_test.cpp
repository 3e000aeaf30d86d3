// `mlsysbench import json`: a JSON report moved to another store with the real binary, refused the second
// time, and refused for another schema version, each refusal with exit status 2 and nothing stored.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "reports/store.hpp"
#include "support/test_support.hpp"

namespace mlsb {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using test::shell_quote;

// A store holding one finished run with a measured case and a failed one.
void write_store(const std::filesystem::path& db) {
  reports::Store store(db);
  reports::RunRecord run;
  run.uuid = "5d0c1f7e-0000-4000-8000-000000000001";
  run.suite = "nightly";
  run.status = reports::RunStatus::Ok;
  run.tags = {"night-1"};
  run.machine_key = "4a5b6c7d8e9f0011";
  run.branch = "main";
  store.begin_run(run);
  reports::CaseRecord ok;
  ok.workload = "compress";
  ok.params = {{"codec", "zstd"}};
  ok.params_key = ok.label = "codec=zstd";
  ok.status = reports::CaseStatus::Ok;
  ok.primary_metric = "time_ms";
  ok.samples = {{"time_ms", {2.0, 2.5, 2.25}}};
  ok.summaries.push_back({"time_ms", "ms", Better::Lower, summarize(ok.samples["time_ms"])});
  store.add_case(run.id, ok);
  reports::CaseRecord failed = ok;
  failed.params_key = failed.label = "codec=lz4";
  failed.status = reports::CaseStatus::Failed;
  failed.reason = "round trip differs";
  failed.samples.clear();
  failed.summaries.clear();
  store.add_case(run.id, failed);
}

TEST(CliImportJson, MovesARunToAnotherStoreOnceAndRefusesAnotherSchema) {
  test::TempDir dir;
  write_store(dir / "a.db");
  const auto report = test::run_cli(dir / "a.db", "report latest --format json -o " + shell_quote(dir / "r.json"));
  ASSERT_EQ(report.exit_code, 0) << report.err;

  const std::string b = "--db " + shell_quote(dir / "b.db") + " ";
  const auto first = test::run_cli(b + "import json " + shell_quote(dir / "r.json") + " --tag imported");
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_THAT(first.err, AllOf(HasSubstr("imported run 5d0c1f7e-0000-4000-8000-000000000001"), HasSubstr("2 case(s)")));
  const auto again = test::run_cli(b + "import json " + shell_quote(dir / "r.json"));
  EXPECT_EQ(again.exit_code, 2);
  EXPECT_THAT(again.err, AllOf(HasSubstr("is already in"), HasSubstr("nothing imported")));

  // The imported run is the original, tagged: its report differs only in the run id and the tags.
  const auto copied = test::run_cli(b + "report imported --format json -o " + shell_quote(dir / "copy.json"));
  ASSERT_EQ(copied.exit_code, 0) << copied.err;
  auto original = nlohmann::json::parse(test::read_file(dir / "r.json"));
  auto copy = nlohmann::json::parse(test::read_file(dir / "copy.json"));
  EXPECT_EQ(copy["run"]["tags"], (nlohmann::json{"night-1", "imported"}));
  for (auto* j : {&original, &copy}) {
    (*j)["run"].erase("id");
    (*j)["run"].erase("tags");
    for (auto& c : (*j)["cases"]) c.erase("id");
  }
  EXPECT_EQ(copy, original);
  EXPECT_THAT(test::run_cli(b + "db ls").out, HasSubstr("5d0c1f7e"));

  auto newer = nlohmann::json::parse(test::read_file(dir / "r.json"));
  newer["schema"] = "mlsysbench.report/2";
  newer["run"]["uuid"] = "5d0c1f7e-0000-4000-8000-000000000002";
  test::write_file(dir / "newer.json", newer.dump());
  const auto refused = test::run_cli("--db " + shell_quote(dir / "c.db") + " import json " + shell_quote(dir / "newer.json"));
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_THAT(refused.err, AllOf(HasSubstr("newer.json"), HasSubstr("\"mlsysbench.report/2\""),
                                 HasSubstr("\"mlsysbench.report/1\"")));
  EXPECT_FALSE(std::filesystem::exists(dir / "c.db"));  // refused before the store was opened
}

}  // namespace
}  // namespace mlsb
