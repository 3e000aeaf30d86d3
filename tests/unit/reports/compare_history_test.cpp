// The gate must not cry wolf: compare with a history of 30 runs raises an alarm for at most 1% of 1,000
// seeds of no change (runs differing by Gaussian, log-normal or autocorrelated run-to-run noise, which
// the samples within a run do not show), yet catches a 10% slowdown; without a history, a change within
// the run-to-run noise is "noisy", a 2x slowdown still "worse", and a throttled case never "worse".
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "reports/compare.hpp"
#include "reports/detection_power.hpp"
#include "unit/reports/fixtures.hpp"

namespace mlsb::reports {
namespace {

using test::make_case;

enum class Noise { Gaussian, LogNormal, Ar1 };

// Run-level factors: 61 runs of the same code on a machine whose state moves between runs.
std::vector<double> run_factors(uint64_t seed, double sigma, Noise kind) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> z(0, 1);
  std::vector<double> f;
  double ar = z(rng) * sigma;
  for (int i = 0; i < 61; ++i) {
    ar = 0.5 * ar + std::sqrt(1 - 0.25) * sigma * z(rng);
    f.push_back(kind == Noise::Gaussian ? 1 + sigma * z(rng) : kind == Noise::LogNormal ? std::exp(sigma * z(rng)) : 1 + ar);
  }
  return f;
}

// A run's 5 samples, within 0.5% of 10 ms * factor: tighter than the run-to-run noise.
std::vector<double> samples_at(double factor, std::mt19937_64& rng) {
  std::normal_distribution<double> z(0, 0.005);
  std::vector<double> t;
  for (int i = 0; i < 5; ++i) t.push_back(10 * factor * (1 + z(rng)));
  return t;
}

RunData run_at(double factor, std::mt19937_64& rng, bool throttled = false) {
  RunData d;
  d.cases.push_back(make_case("compress", {{"codec", "zstd"}}, {{"time_ms", samples_at(factor, rng)}}));
  d.cases.back().throttled = throttled;
  return d;
}

// Compares run 60 (times `slowdown`) against run 59 with runs 30..59 as the history.
Verdict nightly_verdict(const std::vector<double>& f, uint64_t seed, double slowdown) {
  std::mt19937_64 rng(seed * 7919);
  HistoryMedians h;
  auto& medians = h[case_pair_key("compress", "codec=zstd", "local", 1) + "\ntime_ms"];
  for (int i = 30; i < 59; ++i) medians.push_back(median(samples_at(f[i], rng)));
  const RunData base = run_at(f[59], rng);
  medians.push_back(base.cases[0].summaries[0].stats.median);
  const RunData cand = run_at(f[60] * slowdown, rng);
  return compare_runs(base, cand, {}, h).metrics.at(0).verdict;
}

TEST(CompareHistory, NoChangeRaisesAnAlarmInAtMostOnePercentOfSeeds) {
  for (const Noise kind : {Noise::Gaussian, Noise::LogNormal, Noise::Ar1})
    for (const double sigma : {0.01, 0.03}) {
      int alarms = 0;
      for (uint64_t seed = 1; seed <= 1000; ++seed)
        alarms += nightly_verdict(run_factors(seed, sigma, kind), seed, 1.0) == Verdict::Worse;
      EXPECT_LE(alarms, 10) << "noise " << static_cast<int>(kind) << " sigma " << sigma;
    }
}

TEST(CompareHistory, ATenPercentSlowdownIsCaught) {
  int caught = 0;
  for (uint64_t seed = 1; seed <= 20; ++seed)
    caught += nightly_verdict(run_factors(seed, 0.02, Noise::Gaussian), seed, 1.10) == Verdict::Worse;
  EXPECT_GE(caught, 19);
}

TEST(CompareHistory, WithoutHistoryRunToRunNoiseIsNoisyButTwiceAsSlowIsWorse) {
  std::mt19937_64 rng(3);
  const RunData base = run_at(1.0, rng);
  const auto shifted = compare_runs(base, run_at(1.15, rng));  // a 15% shift between two runs
  EXPECT_EQ(shifted.metrics[0].verdict, Verdict::Noisy);
  EXPECT_NE(shifted.metrics[0].why.find("run-to-run noise"), std::string::npos) << shifted.metrics[0].why;
  EXPECT_FALSE(shifted.has_regression());
  EXPECT_EQ(compare_runs(base, run_at(1.15, rng), {.run_noise = 0}).metrics[0].verdict, Verdict::Worse);
  const auto twice = compare_runs(base, run_at(2.0, rng));
  EXPECT_EQ(twice.metrics[0].verdict, Verdict::Worse);
  EXPECT_TRUE(twice.has_regression());
  // A score that every sample repeats has no run-to-run noise: the threshold alone decides.
  const auto score = [](double v) {
    RunData d;
    d.cases.push_back(make_case("toolbench", {{"agent", "oracle"}}, {{"pass@1", {v, v, v, v, v}}}));
    d.cases.back().primary_metric = "pass@1";
    return d;
  };
  EXPECT_EQ(compare_runs(score(0.9), score(0.8)).metrics[0].verdict, Verdict::Worse);  // make_case: higher is better
  EXPECT_EQ(compare_runs(score(0.8), score(0.9)).metrics[0].verdict, Verdict::Better);
}

// Medians of n runs of unchanged code on a machine whose runs differ by a factor exp(sigma z) (newest first).
std::vector<double> history_of(size_t n, double sigma, std::mt19937_64& rng) {
  std::normal_distribution<double> z(0, sigma);
  std::vector<double> h;
  for (size_t i = 0; i < n; ++i) h.push_back(10 * std::exp(z(rng)));
  return h;
}

TEST(CompareHistory, WithoutTheTTestTheHistoryMeasuresTheRunToRunNoise) {
  std::mt19937_64 rng(4);
  const RunData base = run_at(1.0, rng);
  const std::string key = case_pair_key("compress", "codec=zstd", "local", 1) + "\ntime_ms";
  const HistoryMedians quiet{{key, history_of(30, 0.02, rng)}}, noisy{{key, history_of(30, 0.2, rng)}};
  CompareOptions plain;
  plain.history_t_test = false;
  const double quiet_noise = run_to_run_noise(quiet.at(key), plain.two_run_alpha);
  const double noisy_noise = run_to_run_noise(noisy.at(key), plain.two_run_alpha);
  ASSERT_LT(quiet_noise, 0.2);
  ASSERT_GT(noisy_noise, 0.5);
  // A quiet machine: 20% is beyond what its runs show, though within the assumed 25%.
  const auto on_quiet = compare_runs(base, run_at(1.2, rng), plain, quiet).metrics[0];
  EXPECT_EQ(on_quiet.verdict, Verdict::Worse) << on_quiet.why;
  EXPECT_TRUE(std::isnan(on_quiet.history_p));
  // A machine whose runs differ by 20% (sd): 50% is within what 30 of them show, 3x is not.
  const auto on_noisy = compare_runs(base, run_at(1.5, rng), plain, noisy).metrics[0];
  EXPECT_EQ(on_noisy.verdict, Verdict::Noisy);
  EXPECT_NE(on_noisy.why.find("(" + std::to_string(std::lround(noisy_noise * 100)) + "%, the 0.1% prediction bound of 30 runs of unchanged code)"),
            std::string::npos)
      << on_noisy.why;
  EXPECT_EQ(compare_runs(base, run_at(3.0, rng), plain, noisy).metrics[0].verdict, Verdict::Worse);
  // Fewer than 5 runs: the assumed noise.
  HistoryMedians few{{key, {10, 10.1}}};
  EXPECT_NE(compare_runs(base, run_at(1.15, rng), plain, few).metrics[0].why.find("assumed"), std::string::npos);
  EXPECT_EQ(render_comparison(compare_runs(base, run_at(1.15, rng), plain, quiet), "text").find("hist p"),
            std::string::npos);
}

TEST(CompareHistory, TwoRunsOfUnchangedCodeExceedTheMeasuredNoiseAtTheStatedRate) {
  // 20,000 seeds per history length: n runs of log-normal noise, then a new pair of runs; the pair's change in
  // the worse direction exceeds run_to_run_noise(history, 0.001) in about 0.1% of them (measured 0.09-0.14%);
  // the largest change between consecutive runs alone (the old bound) in about 1 / (2 n) (measured 11%, 5.7%, 2%).
  for (const size_t n : {5, 10, 30}) {
    std::mt19937_64 rng(n);
    std::normal_distribution<double> z(0, 0.1);
    int beyond = 0, beyond_largest = 0;
    for (int t = 0; t < 20000; ++t) {
      std::vector<double> h = history_of(n, 0.1, rng);
      const double change = std::exp(z(rng)) / std::exp(z(rng)) - 1;
      beyond += change > run_to_run_noise(h, 0.001);
      beyond_largest += change > run_to_run_noise(h, 0.999);  // the prediction bound is then below the largest change
    }
    EXPECT_LE(beyond, 40) << n << " runs";  // 0.2%
    EXPECT_GE(beyond_largest, 20000 / (2 * static_cast<int>(n)) / 2) << n << " runs";
    RecordProperty("beyond_" + std::to_string(n), beyond);
    RecordProperty("beyond_largest_" + std::to_string(n), beyond_largest);
  }
  EXPECT_TRUE(std::isnan(run_to_run_noise({10}, 0.001)));
  EXPECT_TRUE(std::isinf(run_to_run_noise({10, 0, 10}, 0.001)));
  EXPECT_THROW(run_to_run_noise({10, 11}, 0), std::invalid_argument);
}

// How often the real rule flags a candidate `step` worse than its level, over `trials` seeds of a history of
// n runs with relative run-to-run noise sigma (newest first; the base run is the newest).
int caught(int n, double sigma, double step, int trials) {
  int worse = 0;
  for (int seed = 1; seed <= trials; ++seed) {
    std::mt19937_64 rng(static_cast<uint64_t>(seed) * 104729 + static_cast<uint64_t>(n));
    std::normal_distribution<double> z(0, sigma);
    HistoryMedians h;
    auto& medians = h[case_pair_key("compress", "codec=zstd", "local", 1) + "\ntime_ms"];
    const RunData base = run_at(1 + z(rng), rng);
    medians.push_back(base.cases[0].summaries[0].stats.median);
    while (static_cast<int>(medians.size()) < n) medians.push_back(10 * (1 + z(rng)));
    const RunData cand = run_at((1 + step) + z(rng), rng);
    worse += compare_runs(base, cand, {}, h).metrics.at(0).verdict == Verdict::Worse;
  }
  return worse;
}

// Its own suite (a ctest test of its own: under ASan it takes as long as the rest of CompareHistory).
TEST(DetectionPower, TheStatedDetectableStepIsCaughtWithNinetyFivePercentProbability) {
  for (const int n : {3, 5, 30})
    for (const double sigma : {0.01, 0.03}) {
      const double step = detectable_step(n, sigma, {});
      const int at = caught(n, sigma, step, 200);
      EXPECT_GE(at, 180) << "n " << n << " sigma " << sigma << " step " << step;  // 95% stated; >= 90% seen
      if (n >= kTTestHistory) {
        EXPECT_LE(at, 198) << "n " << n << " sigma " << sigma << " step " << step;  // and not far beyond
        EXPECT_LT(caught(n, sigma, step * 0.6, 200), 166) << "n " << n << " sigma " << sigma;
      }
    }
  // More history, less noise: a smaller step. Fewer than kTTestHistory runs: the two-run floor.
  EXPECT_LT(detectable_step(30, 0.02, {}), detectable_step(5, 0.02, {}));
  EXPECT_LT(detectable_step(30, 0.01, {}), detectable_step(30, 0.03, {}));
  EXPECT_NEAR(detectable_step(3, 0.0, {}), 0.25, 1e-12);
  EXPECT_TRUE(std::isnan(detectable_step(10, NAN, {})));
  EXPECT_THROW(detectable_step(10, 0.01, {}, 1.5), std::invalid_argument);
}

TEST(CompareHistory, ThreeRunsOfHistoryUseTheTwoRunRuleAndCatchOnePointFiveTimes) {
  std::mt19937_64 rng(11);
  HistoryMedians h;
  for (double f : {1.0, 1.01, 0.99}) h[case_pair_key("compress", "codec=zstd", "local", 1) + "\ntime_ms"].push_back(10 * f);
  const auto m = compare_runs(run_at(1.0, rng), run_at(1.5, rng), {}, h).metrics.at(0);
  EXPECT_EQ(m.verdict, Verdict::Worse) << m.why;
  EXPECT_TRUE(std::isnan(m.history_p));  // no t-test on 3 runs
  EXPECT_EQ(compare_runs(run_at(1.0, rng), run_at(1.15, rng), {}, h).metrics.at(0).verdict, Verdict::Noisy);
}

// A counted case: `count` instructions in each of 3 samples, declared deterministic, of commit `sha`.
RunData counted(double count, const std::string& sha) {
  RunData d;
  d.run.git_sha = sha;
  d.cases.push_back(make_case("compress", {{"codec", "zstd"}}, {{"instructions", {count, count, count}}}));
  d.cases.back().primary_metric = "instructions";
  d.cases.back().summaries[0].better = Better::Lower;
  d.cases.back().summaries[0].deterministic = true;
  return d;
}

TEST(CompareHistory, ACountedMetricIsJudgedByTheThresholdAloneAndOneCommitMustRepeatIt) {
  // Another commit: 2% more instructions is worse (three identical samples a side: no test could say so),
  // 0.5% is within the 1% threshold.
  const auto worse = compare_runs(counted(1e6, "a"), counted(1.02e6, "b")).metrics.at(0);
  EXPECT_TRUE(worse.deterministic);
  EXPECT_EQ(worse.verdict, Verdict::Worse);
  EXPECT_EQ(compare_runs(counted(1e6, "a"), counted(0.98e6, "b")).metrics.at(0).verdict, Verdict::Better);
  EXPECT_EQ(compare_runs(counted(1e6, "a"), counted(1.005e6, "b")).metrics.at(0).verdict, Verdict::Same);
  // The same commit: counts that differ beyond 1e-3 are a determinism defect, never worse.
  const auto defect = compare_runs(counted(1e6, "a"), counted(1.02e6, "a")).metrics.at(0);
  EXPECT_EQ(defect.verdict, Verdict::Noisy);
  EXPECT_NE(defect.why.find("determinism defect: two runs of one commit differ by 2"), std::string::npos) << defect.why;
  EXPECT_EQ(compare_runs(counted(1e6, "a"), counted(1e6 + 20, "a")).metrics.at(0).verdict, Verdict::Same);
  // A dirty tree is not "one commit".
  RunData dirty = counted(1.02e6, "a");
  dirty.run.git_dirty = true;
  EXPECT_EQ(compare_runs(counted(1e6, "a"), dirty).metrics.at(0).verdict, Verdict::Worse);
  // A side that does not declare it (an old store): the ordinary rule.
  RunData plain = counted(1.02e6, "b");
  plain.cases[0].summaries[0].deterministic = false;
  EXPECT_FALSE(compare_runs(counted(1e6, "a"), plain).metrics.at(0).deterministic);
}

TEST(CompareHistory, TheBasesPrimaryMetricStaysJudged) {
  std::mt19937_64 rng(6);
  const RunData base = run_at(1.0, rng);
  RunData renamed = run_at(3.0, rng);
  renamed.cases[0].primary_metric = "ratio";  // the candidate declares another primary metric
  EXPECT_TRUE(compare_runs(base, renamed).has_regression());
  RunData lost = run_at(1.0, rng);
  lost.cases[0].samples.erase("time_ms");
  lost.cases[0].samples["ratio"] = {1, 1, 1};
  const auto cmp = compare_runs(base, lost);
  ASSERT_EQ(cmp.lost_primary.size(), 1u);
  EXPECT_EQ(cmp.lost_primary[0].params_key, "codec=zstd");
  EXPECT_NE(render_comparison(cmp, "text").find("Primary metric missing in the candidate"), std::string::npos);
}

TEST(CompareHistory, AThrottledCaseIsNoisyNeverWorse) {
  std::mt19937_64 rng(5);
  const RunData base = run_at(1.0, rng);
  const auto cmp = compare_runs(base, run_at(2.0, rng, /*throttled=*/true));
  EXPECT_EQ(cmp.metrics[0].verdict, Verdict::Noisy);
  EXPECT_TRUE(cmp.metrics[0].throttled);
  EXPECT_EQ(cmp.metrics[0].why, "the GPU throttled");
  EXPECT_FALSE(cmp.has_regression());
}

TEST(CompareHistory, RendersTheHistoryColumnsAndTheWorseCaseIds) {
  std::mt19937_64 rng(9);
  HistoryMedians h;
  for (double f : {1.0, 1.01, 0.99, 1.0, 1.02})
    h[case_pair_key("compress", "codec=zstd", "local", 1) + "\ntime_ms"].push_back(10 * f);
  const auto cmp = compare_runs(run_at(1.0, rng), run_at(1.5, rng), {}, h);
  ASSERT_EQ(cmp.metrics[0].verdict, Verdict::Worse);
  EXPECT_EQ(cmp.metrics[0].history_n, 5);
  EXPECT_LT(cmp.metrics[0].history_p, 0.01);
  const std::string text = render_comparison(cmp, "text");
  EXPECT_NE(text.find("hist p"), std::string::npos) << text;
  const auto json = nlohmann::json::parse(render_comparison(cmp, "json"));
  EXPECT_EQ(json["worse_cases"], nlohmann::json::array({"compress/codec=zstd"}));
  EXPECT_EQ(json["metrics"][0]["history_n"], 5);
  const std::string html = render_comparison(cmp, "html");
  EXPECT_NE(html.find("<tr class=\"worse\">"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
}

}  // namespace
}  // namespace mlsb::reports
