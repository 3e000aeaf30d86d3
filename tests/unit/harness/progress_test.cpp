// The progress line: an ETA from the finished cases of each workload and the sample's own progress,
// one terminal row whatever the width, and plain lines at most every 10 s when stderr is not a terminal;
// what each step of a run writes, in both modes, against a golden file.
#include "harness/progress.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

#include "support/golden.hpp"

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
    c.status = reports::CaseStatus::Ok;
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
  ok.status = reports::CaseStatus::Ok;
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

// `s` with the control characters spelled out (\r, \e, \n; a backslash doubled), so that a golden line
// shows all a step wrote, one-to-one.
std::string visible(const std::string& s) {
  static const std::map<char, std::string> spelled = {{'\r', "\\r"}, {'\033', "\\e"}, {'\n', "\\n"}, {'\\', "\\\\"}};
  std::string out;
  for (const char ch : s) out += spelled.contains(ch) ? spelled.at(ch) : std::string(1, ch);
  return out;
}

// A case record as the runner hands it to case_finished: a status, a reason, the primary metric's summary.
reports::CaseRecord outcome(reports::CaseStatus status, const std::string& reason = "",
                            const std::vector<double>& time_ms = {}) {
  reports::CaseRecord c;
  c.status = status;
  c.reason = reason;
  c.primary_metric = "time_ms";
  if (!time_ms.empty()) c.summaries.push_back({"time_ms", "ms", Better::Lower, summarize(time_ms)});
  return c;
}

// One line per step of two small runs: "step => what it wrote" ("(nothing)" when it wrote nothing). Plain
// lines (stderr not a terminal) and the terminal's status line cut to 40 columns. The clock is the rig's,
// so every time and ETA is exact and the golden file holds no placeholder.
TEST(HarnessProgress, LinesMatchGoldenFile) {
  std::string log;
  size_t seen = 0;  // bytes of the rig's text already logged
  // After `wait` on the rig's clock, `act`; logs `what` with what the rig wrote.
  const auto step = [&](ProgressRig& rig, std::chrono::seconds wait, const std::string& what, auto&& act) {
    rig.now += wait;
    act();
    const std::string wrote = rig.text().substr(seen);
    seen += wrote.size();
    log += what + " => " + (wrote.empty() ? "(nothing)" : visible(wrote)) + "\n";
  };

  log += "plain lines\n";
  ProgressRig p(false, {"compress.codec", "compress.codec", "toolbench"}, 0, {}, {20.0, 20.0, 30.0});
  step(p, 0s, "start 1/3", [&] { p.progress.case_started(0, "compress.codec/codec=zstd"); });
  step(p, 9s, "9 s: sample 1", [&] { p.progress.tick(0); });
  step(p, 3s, "12 s: sample 2", [&] { p.progress.tick(1); });
  step(p, 3s, "15 s: ok", [&] { p.progress.case_finished(outcome(reports::CaseStatus::Ok, "", {10.0, 10.5, 11.0, 10.2})); });
  step(p, 0s, "start 2/3", [&] { p.progress.case_started(1, "compress.codec/codec=lz4"); });
  step(p, 2s, "2 s: failed", [&] { p.progress.case_finished(outcome(reports::CaseStatus::Failed, "decoded 3 elements wrong")); });
  step(p, 0s, "start 3/3", [&] { p.progress.case_started(2, "toolbench/model=mock"); });
  step(p, 10s, "10 s: 25 of 100 tasks", [&] { p.progress.tick(0, 25, 100); });
  step(p, 60s, "70 s: skipped", [&] { p.progress.case_finished(outcome(reports::CaseStatus::Skipped, "needs cuda")); });

  log += "terminal, 40 columns\n";
  seen = 0;
  ProgressRig t(true, {"moe_offload", "moe_offload"}, 40);
  step(t, 0s, "start 1/2", [&] { t.progress.case_started(0, "moe_offload/experts=8,layers=4,policy=belady"); });
  step(t, 1s, "1 s: sample 1, 3 of 7", [&] { t.progress.tick(0, 3, 7); });
  step(t, 1s, "2 s: sample 2", [&] { t.progress.tick(1); });
  step(t, 2s, "4 s: ok", [&] { t.progress.case_finished(outcome(reports::CaseStatus::Ok, "", {2.0})); });
  step(t, 0s, "start 2/2", [&] { t.progress.case_started(1, "moe_offload"); });
  step(t, 1s, "1 s: sample 1", [&] { t.progress.tick(0); });
  step(t, 2s, "3 s: failed", [&] { t.progress.case_finished(outcome(reports::CaseStatus::Failed, "timed out after 3 s")); });

  mlsb::test::expect_golden(mlsb::test::golden_file("harness", "progress.txt"), log);
}

}  // namespace
}  // namespace mlsb
