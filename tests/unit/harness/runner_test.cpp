#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <thread>
#include <cstdio>

#include "harness/progress.hpp"
#include "harness/registry.hpp"
#include "harness/runner.hpp"
#include "reports/store.hpp"
#include "support/test_support.hpp"
#include "unit/harness/test_workloads.hpp"

namespace mlsb {
namespace {

using ::testing::HasSubstr;

CaseSpec spec_for(const std::string& workload, Params params = {}) {
  CaseSpec c;
  c.workload = workload;
  const WorkloadInfo info = make_workload(workload)->info();
  c.params = expand_axes(info, {}).front();  // defaults, then the given values
  for (auto& [k, v] : params) c.params[k] = v;
  c.runner = info.runner;
  return c;
}

reports::CaseRecord run(const CaseSpec& spec) {
  std::atomic<bool> cancel{false};
  return run_case(spec, "cpu", 7, cancel);
}

TEST(HarnessRunner, StoppingRule) {
  RunnerDefaults r;
  r.min_samples = 3;
  r.max_samples = 10;
  r.min_time_s = 1.0;
  r.max_noise = 0.05;
  r.max_time_s = 5;
  EXPECT_FALSE(should_stop(r, 2, 2.0, 0.0));   // too few samples
  EXPECT_FALSE(should_stop(r, 3, 0.5, 0.0));   // too little time
  EXPECT_FALSE(should_stop(r, 3, 2.0, 0.10));  // too noisy
  EXPECT_TRUE(should_stop(r, 3, 2.0, 0.01));
  EXPECT_TRUE(should_stop(r, 10, 0.1, 1.0));  // max samples
  EXPECT_TRUE(should_stop(r, 4, 5.5, 1.0));   // time limit
}

TEST(HarnessRunner, RepetitionsAreAFixedCountNotCutByTheTimeLimit) {
  auto spec = spec_for("test_sleep", {{"ms", int64_t{30}}});
  RunnerOverrides ro;
  ro.max_time_s = 0.01;  // a suite's time limit, shorter than one sample
  ro.set_repetitions(4);
  spec.runner = ro.apply(spec.runner);
  const auto r = run(spec);
  ASSERT_EQ(r.status, reports::CaseStatus::Ok) << r.reason;
  EXPECT_EQ(r.samples.at("value").size(), 4u);
}

TEST(HarnessRunner, ABatchRepeatsAFastCallUntilTheSampleLastsItsMinimumTime) {
  EXPECT_EQ(batch_calls(0.01, 0.001, true), 10);
  EXPECT_EQ(batch_calls(0.01, 0.003, true), 4);           // rounded up: a sample lasts at least 10 ms
  EXPECT_EQ(batch_calls(0.01, 0.02, true), 1);            // slow enough already
  EXPECT_EQ(batch_calls(0.01, 0.001, false), 1);          // ranks > 1 or counted: never
  EXPECT_EQ(batch_calls(0, 0.001, true), 1);              // 0: never
  EXPECT_EQ(batch_calls(0.01, INFINITY, true), 1);        // no warm-up
  EXPECT_EQ(batch_calls(1.0, 0.0, true), kMaxBatch);      // a call below the clock's resolution
  // A case whose call takes microseconds, with samples of at least 20 ms: each sample repeats the call (every
  // call counted), the count is in the case's reason and its items, and a value every call records alike
  // is stored exactly as one call records it.
  auto spec = spec_for("test_counter", {{"mode", std::string("a")}, {"size", int64_t{3}}});
  RunnerOverrides ro;
  ro.set_repetitions(3);
  spec.runner = ro.apply(spec.runner);
  const auto single = run(spec);
  ro.min_sample_s = 0.02;
  spec.runner = ro.apply(spec.runner);
  const int before = test::counter_samples();
  const auto r = run(spec);
  ASSERT_EQ(r.status, reports::CaseStatus::Ok) << r.reason;
  ASSERT_EQ(r.samples.at("value").size(), 3u);
  EXPECT_THAT(r.reason, testing::ContainsRegex("note: each sample is the mean of [0-9]+ calls"));
  int calls = 0;
  for (const auto& [key, item] : r.items)
    if (key == "batch") calls = item.at("calls_per_sample").get<int>();
  EXPECT_GT(calls, 10);
  EXPECT_EQ(test::counter_samples() - before, 1 + 3 * calls);  // the warm-up call, then 3 batches
  EXPECT_EQ(r.samples, single.samples);
  EXPECT_THAT(single.reason, testing::Not(HasSubstr("mean of")));
}

TEST(HarnessRunner, OkCaseHasSamplesSummariesAndReproducibleData) {
  const int before = test::counter_samples();
  const auto spec = spec_for("test_counter", {{"mode", std::string("a")}, {"size", int64_t{3}}});
  const auto a = run(spec);
  EXPECT_EQ(a.status, reports::CaseStatus::Ok) << a.reason;
  EXPECT_EQ(a.primary_metric, "value");
  EXPECT_EQ(a.params_key, "mode=a,size=3");
  // Quiet data: the stopping rule holds at min_samples (3); one warm-up sample came first.
  ASSERT_EQ(a.samples.at("value").size(), 3u);
  EXPECT_EQ(test::counter_samples() - before, 4);
  ASSERT_EQ(a.summaries.size(), 1u);
  EXPECT_EQ(a.summaries[0].unit, "ms");
  EXPECT_NEAR(a.summaries[0].stats.median, 3.0, 0.01);
  const auto b = run(spec);
  EXPECT_EQ(a.samples, b.samples);  // same run seed, same case -> same data
  std::atomic<bool> cancel{false};
  const auto c = run_case(spec, "cpu", 8, cancel);
  EXPECT_NE(a.samples, c.samples);
}

TEST(HarnessRunner, WithoutNvmlOrAGpuACaseRecordsNoGpuState) {
  if (!cuda::probe().gpus.empty()) GTEST_SKIP() << "a GPU is present (tests/gpu reads its state)";
  const auto r = run(spec_for("test_counter", {{"size", int64_t{2}}}));
  ASSERT_EQ(r.status, reports::CaseStatus::Ok) << r.reason;
  EXPECT_EQ(r.gpu, nlohmann::json::object());
  EXPECT_FALSE(r.throttled);
}

TEST(HarnessRunner, FailuresAreIsolatedWithReasons) {
  auto f = run(spec_for("test_fail"));
  EXPECT_EQ(f.status, reports::CaseStatus::Failed);
  EXPECT_THAT(f.reason, HasSubstr("41 != 42"));
  EXPECT_TRUE(f.samples.empty());  // a failed case is not timed
  auto s = run(spec_for("test_skip"));
  EXPECT_EQ(s.status, reports::CaseStatus::Skipped);
  EXPECT_EQ(s.reason, "backend absent");
  auto t = run(spec_for("test_throw"));
  EXPECT_EQ(t.status, reports::CaseStatus::Failed);
  EXPECT_THAT(t.reason, HasSubstr("boom"));
  auto n = run(spec_for("test_nan"));
  EXPECT_EQ(n.status, reports::CaseStatus::Failed);
  EXPECT_THAT(n.reason, HasSubstr("not finite"));
  auto p = run(spec_for("test_noprimary"));
  EXPECT_EQ(p.status, reports::CaseStatus::Failed);
  EXPECT_THAT(p.reason, HasSubstr("primary metric 'value'"));
  std::atomic<bool> cancel{false};
  auto b = run_case(spec_for("test_counter"), "cuda", 1, cancel);
  EXPECT_EQ(b.status, reports::CaseStatus::Skipped);
  EXPECT_THAT(b.reason, HasSubstr("cuda"));
}

TEST(HarnessRunner, TimeoutCancelsCooperativeCase) {
  auto spec = spec_for("test_sleep", {{"ms", int64_t{5000}}});
  spec.runner.timeout_s = 0.3;
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = run(spec);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(r.status, reports::CaseStatus::Timeout);
  EXPECT_THAT(r.reason, HasSubstr("timed out"));
  EXPECT_LT(took, 3.0);
}

TEST(HarnessRunner, TimeoutAbandonsCaseThatIgnoresCancellation) {
  auto spec = spec_for("test_hang", {{"ms", int64_t{9000}}});
  spec.runner.timeout_s = 0.2;
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = run(spec);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(r.status, reports::CaseStatus::Timeout);
  EXPECT_THAT(r.reason, HasSubstr("abandoned"));
  EXPECT_LT(took, 7.0);
}

TEST(HarnessRunner, RunPlanStoresEveryCaseAndGoesOn) {
  test::TempDir dir;
  reports::Store store(dir / "r.db");
  Plan plan;
  plan.suite = "unit";
  plan.cases = {spec_for("test_counter"), spec_for("test_fail"), spec_for("test_skip"), spec_for("test_counter")};
  std::FILE* sink = std::fopen("/dev/null", "w");
  Progress progress(sink, false, std::vector<PlannedCase>(4, {"test"}));
  std::atomic<bool> interrupt{false};
  RunOptions opts;
  opts.tags = {"t1"};
  const auto out = run_plan(plan, opts, store, progress, interrupt);
  std::fclose(sink);
  EXPECT_EQ(out.status, reports::RunStatus::Failed);
  EXPECT_EQ(out.ok, 2);
  EXPECT_EQ(out.failed, 1);
  EXPECT_EQ(out.skipped, 1);
  const auto data = store.load_run(out.run_id);
  EXPECT_EQ(data.run.status, reports::RunStatus::Failed);
  EXPECT_EQ(data.run.tags, std::vector<std::string>{"t1"});
  EXPECT_TRUE(data.run.env.contains("cpu_model"));
  // What pyperf records beside it: the load when the run started and the CPUs the process may use.
  ASSERT_TRUE(data.run.env.contains("load_average"));
  EXPECT_EQ(data.run.env["load_average"].size(), 3u);
  EXPECT_GE(data.run.env.value("cpu_affinity", 0), 1);
  ASSERT_EQ(data.cases.size(), 4u);
  EXPECT_EQ(data.cases[1].status, reports::CaseStatus::Failed);
  EXPECT_THAT(data.cases[1].reason, HasSubstr("41 != 42"));
  EXPECT_EQ(data.cases[3].samples.at("value").size(), 3u);
}

TEST(HarnessRunner, InterruptKeepsFinishedCasesAndMarksRun) {
  test::TempDir dir;
  reports::Store store(dir / "r.db");
  Plan plan;
  plan.suite = "unit";
  auto slow = spec_for("test_sleep", {{"ms", int64_t{200}}});
  slow.runner.warmup = 0;
  slow.runner.min_samples = slow.runner.max_samples = 1;
  auto endless = spec_for("test_sleep", {{"ms", int64_t{100}}});  // 1000 samples of 100 ms
  endless.runner.warmup = 0;
  endless.runner.min_samples = endless.runner.max_samples = 1000;
  endless.runner.max_time_s = 1000;
  plan.cases = {slow, endless, slow};
  std::FILE* sink = std::fopen("/dev/null", "w");
  Progress progress(sink, false, std::vector<PlannedCase>(3, {"test"}));
  std::atomic<bool> interrupt{false};
  std::thread presser([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(800));
    interrupt = true;
  });
  const auto out = run_plan(plan, {}, store, progress, interrupt);
  presser.join();
  std::fclose(sink);
  EXPECT_EQ(out.status, reports::RunStatus::Interrupted);
  const auto data = store.load_run(out.run_id);
  EXPECT_EQ(data.run.status, reports::RunStatus::Interrupted);
  ASSERT_EQ(data.cases.size(), 2u);  // the third never started
  EXPECT_EQ(data.cases[0].status, reports::CaseStatus::Ok);
  EXPECT_EQ(data.cases[1].status, reports::CaseStatus::Interrupted);
  // It keeps the samples it finished (about 6 of 100 ms in the 600 ms it ran), not the one cut short.
  const auto& kept = data.cases[1].samples.at("value");
  EXPECT_GE(kept.size(), 2u);
  EXPECT_LE(kept.size(), 7u);
  EXPECT_THAT(data.cases[1].reason, HasSubstr("kept the " + std::to_string(kept.size()) + " samples it finished"));
  ASSERT_FALSE(data.cases[1].summaries.empty());
}

TEST(HarnessRunner, CaseSeedDependsOnRunSeedAndCase) {
  EXPECT_EQ(case_seed(1, "w/a=1"), case_seed(1, "w/a=1"));
  EXPECT_NE(case_seed(1, "w/a=1"), case_seed(2, "w/a=1"));
  EXPECT_NE(case_seed(1, "w/a=1"), case_seed(1, "w/a=2"));
}

// The seed's key holds the data axes only: cache policies replay one trace, drop policies route the same
// tokens, codecs compress the same tensor; another size or skew is another draw.
TEST(HarnessRunner, DataKeyHoldsOnlyTheDataAxes) {
  const auto key = [](const std::string& workload, const std::string& axis, Value v) {
    const CaseSpec spec = spec_for(workload, {{axis, std::move(v)}});
    return data_key(make_workload(workload)->info(), spec.params);
  };
  EXPECT_EQ(key("moe_offload", "policy", "lru"), key("moe_offload", "policy", "belady"));
  EXPECT_NE(key("moe_offload", "zipf", 1.0), key("moe_offload", "zipf", 1.2));
  EXPECT_EQ(key("moe_train.layer", "drop_policy", "probs"), key("moe_train.layer", "drop_policy", "position"));
  EXPECT_NE(key("moe_train.layer", "experts", int64_t{8}), key("moe_train.layer", "experts", int64_t{16}));
  EXPECT_EQ(key("compress.codec", "codec", "exponent"), key("compress.codec", "codec", "zstd"));
  EXPECT_NE(key("compress.codec", "elements", int64_t{1024}), key("compress.codec", "elements", int64_t{2048}));
  EXPECT_EQ(key("toolbench", "agent", "oracle"), key("toolbench", "agent", "heuristic"));
  EXPECT_THAT(key("compress.codec", "codec", "zstd"), ::testing::StartsWith("compress.codec/"));
  EXPECT_THAT(key("compress.codec", "codec", "zstd"), ::testing::Not(HasSubstr("codec=")));
}

}  // namespace
}  // namespace mlsb
