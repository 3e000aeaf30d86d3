// The stored item of a task trial: a long result is kept as a marked excerpt (or whole on request), and
// a call that timed out keeps its elapsed time.
#include "workloads/toolbench/item.hpp"

#include <gtest/gtest.h>

namespace mlsb::toolbench {
namespace {

TrialRun run_with_result(std::string text) {
  TrialRun run;
  CallRecord c;
  c.call.name = "read_file";
  c.call.server = "filesystem";
  c.outcome.text = std::move(text);
  c.outcome.answered = true;
  c.outcome.latency_ms = 12.5;
  run.calls.push_back(c);
  return run;
}

TEST(ToolbenchItem, LongResultsAreMarkedExcerptsUnlessKeptWhole) {
  Task task;
  task.uuid = "t1";
  const std::string big(300 * 1024, 'x');
  const TrialRun run = run_with_result(big);
  const auto item = make_item(task, run, TrialScore{}, /*keep_results=*/false);
  const std::string stored = item["calls"][0]["result"].get<std::string>();
  EXPECT_EQ(stored, std::string(4096, 'x') + "... [cut: 4096 of 307200 bytes shown]");
  EXPECT_EQ(item["result_excerpt"].get<std::string>(), stored);
  EXPECT_TRUE(item["calls"][0]["answered"].get<bool>());
  EXPECT_EQ(item["calls"][0]["latency_ms"].get<double>(), 12.5);

  const auto whole = make_item(task, run, TrialScore{}, /*keep_results=*/true);
  EXPECT_EQ(whole["calls"][0]["result"].get<std::string>(), big);
  // A short result is stored as it is, with no marker.
  EXPECT_EQ(make_item(task, run_with_result("ok"), TrialScore{}, false)["calls"][0]["result"], "ok");
}

}  // namespace
}  // namespace mlsb::toolbench
