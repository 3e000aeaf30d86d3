// The progress line: an ETA from the finished cases of each workload and the sample's own progress,
// one terminal row whatever the width, and plain lines at most every 10 s when stderr is not a terminal.
#include "harness/progress.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace mlsb {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;

// A Progress writing to a memory buffer, on a clock the test moves.
struct ProgressRig {
  Progress::Clock::time_point now{};
  char* buf = nullptr;
  size_t size = 0;
  std::FILE* out = open_memstream(&buf, &size);
  Progress progress;
  ProgressRig(bool tty, const std::vector<std::string>& workloads, int columns = 0, std::vector<double> last = {},
              std::vector<double> expected = {})
      : progress(out, tty, planned(workloads, last, expected), columns, [this] { return now; }) {}
  static std::vector<PlannedCase> planned(const std::vector<std::string>& workloads, const std::vector<double>& last,
                                          const std::vector<double>& expected) {
    std::vector<PlannedCase> out;
    for (size_t i = 0; i < workloads.size(); ++i)
      out.push_back({workloads[i], i < last.size() ? last[i] : -1, i < expected.size() ? expected[i] : -1});
    return out;
  }
  ~ProgressRig() {
    std::fclose(out);
    std::free(buf);
  }
  std::string text() {
    std::fflush(out);
    return std::string(buf, size);
  }
  void finish(int i, const std::string& id, std::chrono::seconds took) {
    progress.case_started(i, id);
    now += took;
    reports::CaseRecord c;
    c.status = "ok";
    progress.case_finished(c);
  }
};

TEST(HarnessProgress, EtaFollowsEachWorkloadsFinishedCases) {
  ProgressRig f(false, {"a", "a", "b", "b"});
  f.finish(0, "a/x=1", 10s);  // a: 10 s; b unknown: taken as the median of all finished (10 s)
  EXPECT_THAT(f.text(), HasSubstr("[1/4] a/x=1  ok  ETA 0:30"));
  f.finish(1, "a/x=2", 10s);
  f.finish(2, "b/x=1", 40s);  // b: 40 s now
  EXPECT_THAT(f.text(), HasSubstr("[3/4] b/x=1  ok  ETA 0:40"));
  f.finish(3, "b/x=2", 40s);
  EXPECT_THAT(f.text(), HasSubstr("[4/4] b/x=2  ok\n"));  // nothing left: no ETA
  // The ETA does not grow while a case runs within its estimate.
  ProgressRig g(false, {"a", "a", "a"});
  g.finish(0, "a/1", 20s);
  g.progress.case_started(1, "a/2");
  g.now += 5s;
  EXPECT_DOUBLE_EQ(g.progress.seconds_left(), 35.0);
  g.now += 10s;
  EXPECT_DOUBLE_EQ(g.progress.seconds_left(), 25.0);
}

// A case the store has seen before is estimated by its last time there, before anything of this run ends.
TEST(HarnessProgress, TheStoresLastTimesComeFirst) {
  ProgressRig f(false, {"toolbench", "compress", "compress"}, 0, {20.0, 0.5, -1});
  f.progress.case_started(0, "toolbench");
  f.now += 2s;
  EXPECT_DOUBLE_EQ(f.progress.seconds_left(), 18.0 + 0.5 + 20.0);  // the unknown case: as long as the one in flight
  f.now += 28s;  // longer than last time: the case in flight is at least as long as it has run
  EXPECT_DOUBLE_EQ(f.progress.seconds_left(), 0.0 + 0.5 + 30.0);
}

// On a fresh store, a suite's expected times, scaled by how this machine did on the cases that ended,
// estimate the cases of workloads not seen yet (the smoke suite's toolbench cases take 20 s, its compress
// cases a fraction of a second: a median of finished cases would take each compress case as 20 s).
TEST(HarnessProgress, ASuitesExpectedTimesScaleWithTheFinishedCases) {
  ProgressRig f(false, {"toolbench", "compress", "moe_train", "other"}, 0, {}, {20.0, 0.5, 8.0, -1});
  f.progress.case_started(0, "toolbench");
  f.now += 5s;
  EXPECT_DOUBLE_EQ(f.progress.seconds_left(), 15.0 + 0.5 + 8.0 + 20.0);  // unscaled; "other" as the one in flight
  f.now += 35s;  // 40 s where 20 were expected: this machine is 2x slower
  reports::CaseRecord ok;
  ok.status = "ok";
  f.progress.case_finished(ok);
  EXPECT_THAT(f.text(), HasSubstr("[1/4] toolbench  ok  ETA 0:57"));  // 2 x (0.5 + 8) + 40 (the median so far)
  f.progress.case_started(1, "compress");
  f.now += 1s;  // 1 s where 0.5 s were expected: still 2x
  f.progress.case_finished(ok);
  EXPECT_THAT(f.text(), HasSubstr("[2/4] compress  ok  ETA 0:37"));  // 2 x 8 + 20.5 (the median of 40 and 1)
}

TEST(HarnessProgress, TheSamplesOwnProgressGivesTheFirstCaseAnEta) {
  ProgressRig f(false, {"toolbench"});
  f.progress.case_started(0, "toolbench");
  EXPECT_LT(f.progress.seconds_left(), 0);  // nothing known yet
  f.now += 5s;
  f.progress.tick(0, 25, 100);  // a quarter of the one sample in 5 s: 15 s left
  EXPECT_DOUBLE_EQ(f.progress.seconds_left(), 15.0);
  f.now += 10s;  // 10 s since the last line: a plain line, with the sample's units and the ETA
  f.progress.tick(0, 50, 100);
  EXPECT_THAT(f.text(), HasSubstr("[1/1] toolbench  sample 1  50/100  ETA 0:15"));
}

TEST(HarnessProgress, PlainLinesAtMostEveryTenSeconds) {
  ProgressRig f(false, {"a"});
  f.progress.case_started(0, "a");
  for (int s = 0; s < 25; ++s) {
    f.now += 1s;
    f.progress.tick(s / 5);
  }
  const std::string t = f.text();
  EXPECT_EQ(std::count(t.begin(), t.end(), '\n'), 2) << t;  // at 10 s and 20 s
}

TEST(HarnessProgress, TerminalLineFitsTheWidthAndKeepsTheEta) {
  ProgressRig f(true, {"moe_offload", "moe_offload"}, 50);
  const std::string id = "moe_offload/experts=8,layers=4,policy=belady,seq_len=32";
  f.finish(0, id, 3s);
  f.progress.case_started(1, id);
  f.now += 1s;
  f.progress.tick(2, 3, 7);
  const std::string t = f.text();
  const std::string last = t.substr(t.rfind("\r\033[K") + 4);
  EXPECT_LE(last.size(), 49u) << last;
  EXPECT_THAT(last, HasSubstr("[2/2] moe_offload"));
  EXPECT_THAT(last, HasSubstr("sample 3  3/7  ETA 0:02"));
}

}  // namespace
}  // namespace mlsb
