// Display names of cases and the `db ls` / `db show` listings.
#include <gtest/gtest.h>

#include "reports/case_names.hpp"
#include "reports/run_listing.hpp"
#include "unit/reports/fixtures.hpp"

namespace mlsb::reports {
namespace {

TEST(ReportsCaseNamesTest, UsesTheLabelAndTheWorkloadAloneForAllDefaults) {
  const RunData run = test::fixture_run();
  const auto names = case_display_names(run.cases);
  ASSERT_EQ(names.size(), run.cases.size());
  EXPECT_EQ(names[0], "moe_train/experts=8");
  EXPECT_EQ(names[3], "moe_train/experts=128,topk=8");
  EXPECT_EQ(names[4], "toolbench");
}

TEST(ReportsCaseNamesTest, FallsBackToTheParamsKeyForCollidingNames) {
  std::vector<CaseRecord> cases(4);
  for (auto& c : cases) c.workload = "w";
  cases[0].params_key = "a=1,dataset=/x/one.json";
  cases[1].params_key = "a=1,dataset=/y/one.json";
  cases[0].label = cases[1].label = "a=1,dataset=one.json";  // e.g. a label shortened by the runner
  cases[2].params_key = "a=2";
  cases[2].label = "a=2";
  cases[3].workload = "v";
  cases[3].label = "a=1,dataset=one.json";  // same label, another workload: no collision
  const auto names = case_display_names(cases);
  EXPECT_EQ(names, (std::vector<std::string>{"w/a=1,dataset=/x/one.json", "w/a=1,dataset=/y/one.json", "w/a=2",
                                             "v/a=1,dataset=one.json"}));
  EXPECT_EQ(params_name(cases[3]), "v");
}

TEST(ReportsCaseNamesTest, CasesWithTheSameParamsGetTheirPlacementThenANumber) {
  std::vector<CaseRecord> cases(4);
  for (auto& c : cases) {
    c.workload = "w";
    c.params_key = c.label = "a=1";
  }
  cases[1].comm = "mpi";
  cases[1].ranks = 4;
  const auto names = case_display_names(cases);
  EXPECT_EQ(names, (std::vector<std::string>{"w/a=1 [cpu, local x1] #1", "w/a=1 [cpu, mpi x4]",
                                             "w/a=1 [cpu, local x1] #2", "w/a=1 [cpu, local x1] #3"}));
}

TEST(ReportsRunListingTest, ListsDurationAndCaseCounts) {
  RunSummary done{test::fixture_run().run, {3, 1, 1}};
  RunSummary running;
  running.run.id = 8;
  running.run.uuid = "abcdef12-0000";
  running.run.started_at = 1767225600;
  const std::string text = format_run_list(std::vector<RunSummary>{running, done});
  std::istringstream lines(text);
  std::string header, first, second;
  std::getline(lines, header);
  std::getline(lines, first);
  std::getline(lines, second);
  for (const char* column : {"duration", "ok", "failed", "other"})
    EXPECT_NE(header.find(column), std::string::npos) << header;
  EXPECT_NE(second.find("1m00s"), std::string::npos) << second;  // 60 s from start to finish
  EXPECT_NE(second.find("   3      1     1 "), std::string::npos) << second;
  EXPECT_NE(first.find(" - "), std::string::npos) << first;  // still running: no duration
  // Columns line up: the counts end where the header's count columns end.
  EXPECT_EQ(header.find("other") + 5, second.find("   3      1     1 ") + 17) << header << "\n" << second;
}

TEST(ReportsRunListingTest, ShowsCasesByDisplayName) {
  const std::string text = format_run_detail(test::fixture_run());
  EXPECT_NE(text.find("[ok] moe_train/experts=8  time_ms"), std::string::npos) << text;
  EXPECT_NE(text.find("[ok] toolbench  time_ms"), std::string::npos) << text;
  EXPECT_EQ(text.find("throttled"), std::string::npos) << text;
  EXPECT_EQ(text.find("topk=2"), std::string::npos) << text;
}

TEST(ReportsRunListingTest, ShowsAThrottledCaseWithItsReasons) {
  RunData run = test::fixture_run();
  run.cases[0].throttled = true;
  run.cases[0].gpu = {{"throttle_reasons", nlohmann::json::array({"hw_slowdown"})}};
  const std::string text = format_run_detail(run);
  EXPECT_NE(text.find("[ok] moe_train/experts=8  time_ms 10.5 ms (n=5)  throttled (hw_slowdown)\n"),
            std::string::npos)
      << text;
}

}  // namespace
}  // namespace mlsb::reports
