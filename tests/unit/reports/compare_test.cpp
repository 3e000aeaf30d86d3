// Run comparison: verdicts (A/A, slower, noisy, few samples), unmatched cases, and the renderings (the text
// table of `compare --format text` against a golden file).
#include <gtest/gtest.h>

#include "reports/compare.hpp"
#include "support/golden.hpp"
#include "util/text.hpp"
#include "unit/reports/fixtures.hpp"

namespace mlsb::reports {
namespace {

using test::make_case;

RunData one_case_run(const std::string& uuid, std::vector<double> time_ms, std::vector<double> bw = {}) {
  RunData d;
  d.run.uuid = uuid;
  std::map<std::string, std::vector<double>> samples{{"time_ms", std::move(time_ms)}};
  if (!bw.empty()) samples["bw"] = std::move(bw);
  d.cases.push_back(make_case("moe_train", {{"experts", 8}}, samples));
  d.cases.back().label = "experts=8";
  return d;
}

// These tests check the two-run statistics themselves, so no run-to-run noise floor is assumed (the
// floor and the history t-test are tested in compare_history_test.cpp).
constexpr CompareOptions kTwoRun{.run_noise = 0};

MetricComparison metric(const Comparison& c, const std::string& name) {  // a copy: callers pass temporaries
  for (const auto& m : c.metrics)
    if (m.metric == name) return m;
  throw std::runtime_error("no metric " + name);
}

TEST(CompareTest, IdenticalRunsAreTheSameEverywhereWithoutRegression) {
  const RunData run = test::fixture_run();
  const Comparison c = compare_runs(run, run);
  ASSERT_FALSE(c.metrics.empty());
  for (const auto& m : c.metrics) {
    EXPECT_EQ(m.verdict, Verdict::Same) << m.workload << " " << m.metric;
    EXPECT_EQ(m.ratio, 1.0);
  }
  EXPECT_FALSE(c.has_regression());
  EXPECT_FALSE(c.has_regression(/*primary_only=*/false));
  EXPECT_TRUE(c.only_base.empty());
  EXPECT_TRUE(c.only_cand.empty());
  EXPECT_EQ(c.not_compared.size(), 2u);  // the failed and the skipped case
}

TEST(CompareTest, CasesOnOtherRankCountsOrCommunicatorsDoNotPair) {
  const RunData base = one_case_run("a", {5.0, 5.1, 4.9, 5.0});
  for (const auto& [comm, ranks] : {std::pair<std::string, int>{"mpi", 4}, {"local", 2}, {"mpi", 1}}) {
    RunData cand = one_case_run("b", {1.0, 1.1, 0.9, 1.0});
    cand.cases[0].comm = comm;
    cand.cases[0].ranks = ranks;
    const Comparison c = compare_runs(base, cand);
    EXPECT_TRUE(c.metrics.empty()) << comm << " " << ranks;
    EXPECT_EQ(c.only_base.size(), 1u);
    EXPECT_EQ(c.only_cand.size(), 1u);
  }
}

TEST(CompareTest, IdenticalSingleSamplesAreTheSame) {
  const RunData run = one_case_run("a", {5.0});
  const Comparison c = compare_runs(run, run);
  EXPECT_EQ(metric(c, "time_ms").verdict, Verdict::Same);
  EXPECT_FALSE(c.has_regression());
}

TEST(CompareTest, AClearlySlowerCandidateIsWorseAndARegression) {
  const RunData base = one_case_run("a", {10, 10.2, 9.9, 10.1, 10.0, 9.8, 10.3, 10.1}, {100, 101, 99, 100, 102, 98, 100, 101});
  const RunData cand = one_case_run("b", {12, 12.1, 11.9, 12.2, 12.0, 11.8, 12.3, 12.1}, {120, 121, 119, 120, 122, 118, 120, 121});
  const Comparison c = compare_runs(base, cand, kTwoRun);
  const auto& t = metric(c, "time_ms");
  EXPECT_EQ(t.verdict, Verdict::Worse);
  EXPECT_TRUE(t.primary);
  EXPECT_NEAR(t.ratio, 1.2, 0.02);
  EXPECT_LT(t.ci_lo, t.ratio);
  EXPECT_GT(t.ci_hi, t.ratio);
  EXPECT_LT(t.p_value, 0.01);
  EXPECT_EQ(metric(c, "bw").verdict, Verdict::Better);  // higher is better for GB/s
  EXPECT_TRUE(c.has_regression());
  // The same change the other way round is an improvement, not a regression.
  const Comparison back = compare_runs(cand, base, kTwoRun);
  EXPECT_EQ(metric(back, "time_ms").verdict, Verdict::Better);
  EXPECT_EQ(metric(back, "bw").verdict, Verdict::Worse);
  EXPECT_FALSE(back.has_regression());
  EXPECT_TRUE(back.has_regression(/*primary_only=*/false));
}

TEST(CompareTest, AShiftBuriedInNoiseIsNoisy) {
  const RunData base = one_case_run("a", {10, 14, 7, 12, 9, 16, 8, 11});
  const RunData cand = one_case_run("b", {11, 16, 8, 13, 10, 18, 9, 12});
  const auto& t = metric(compare_runs(base, cand), "time_ms");
  EXPECT_GT(std::fabs(t.ratio - 1), 0.05);
  EXPECT_GE(t.p_value, 0.05);
  EXPECT_EQ(t.verdict, Verdict::Noisy);
}

TEST(CompareTest, ASmallChangeWithinTheThresholdIsTheSame) {
  const RunData base = one_case_run("a", {10, 10.1, 10.0, 10.05, 9.95});
  const RunData cand = one_case_run("b", {10.2, 10.3, 10.2, 10.25, 10.15});
  EXPECT_EQ(metric(compare_runs(base, cand), "time_ms").verdict, Verdict::Same);
  EXPECT_EQ(metric(compare_runs(base, cand, {.threshold = 0.01, .run_noise = 0}), "time_ms").verdict, Verdict::Worse);
}

TEST(CompareTest, TooFewSamplesForTheUTestFallBackOnTheRatioCI) {
  // n = 2: no U test can reach p < 0.05; the whole CI of the ratio lies above 1.05 -> worse.
  EXPECT_EQ(metric(compare_runs(one_case_run("a", {10, 10.1}), one_case_run("b", {15, 15.2})), "time_ms").verdict,
            Verdict::Worse);
  // n = 2 with overlapping spread: the CI reaches into the threshold band -> noisy.
  EXPECT_EQ(metric(compare_runs(one_case_run("a", {10, 13}), one_case_run("b", {10.5, 14})), "time_ms").verdict,
            Verdict::Noisy);
  EXPECT_EQ(metric(compare_runs(one_case_run("a", {10, 13}), one_case_run("b", {10.5, 14})), "time_ms").significance,
            Significance::RatioCI);
}

TEST(CompareTest, WithASingleSampleTheThresholdAloneDecides) {
  // No noise estimate on a side with n = 1: like compare.py without repetitions, a change beyond the
  // threshold is better/worse, one within it is the same; the comparison says no test was possible.
  const Comparison single = compare_runs(one_case_run("a", {10}), one_case_run("b", {20}));
  EXPECT_EQ(metric(single, "time_ms").verdict, Verdict::Worse);
  EXPECT_EQ(metric(single, "time_ms").significance, Significance::None);
  EXPECT_TRUE(single.has_regression());
  EXPECT_EQ(metric(compare_runs(one_case_run("a", {10}), one_case_run("b", {10.4})), "time_ms").verdict,
            Verdict::Same);
  EXPECT_EQ(metric(compare_runs(one_case_run("a", {10}), one_case_run("b", {9})), "time_ms").verdict,
            Verdict::Better);
  // One side with many samples still has no estimate for the other.
  const auto& mixed = metric(compare_runs(one_case_run("a", {10, 10.1, 9.9, 10, 10.2}), one_case_run("b", {12}), kTwoRun),
                             "time_ms");
  EXPECT_EQ(mixed.verdict, Verdict::Worse);
  EXPECT_EQ(mixed.significance, Significance::None);
  // The reported case: pass@1 (higher is better) drops 29% with n = 1 on both sides -> a regression.
  const auto pass_run = [](const std::string& uuid, double pass) {
    RunData d;
    d.run.uuid = uuid;
    d.cases.push_back(make_case("toolbench", {{"model", "m"}}, {{"pass@1", {pass}}}));
    d.cases.back().primary_metric = "pass@1";
    return d;
  };
  const Comparison drop = compare_runs(pass_run("a", 0.70), pass_run("b", 0.50));
  EXPECT_EQ(metric(drop, "pass@1").verdict, Verdict::Worse);
  EXPECT_TRUE(drop.has_regression());
  EXPECT_FALSE(compare_runs(pass_run("a", 0.50), pass_run("b", 0.70)).has_regression());
}

TEST(CompareTest, SingleSampleRowsAreMarkedInEveryRendering) {
  const Comparison c = compare_runs(one_case_run("a", {10}), one_case_run("b", {20}));
  const std::string text = render_comparison(c, "text");
  EXPECT_NE(text.find("worse (n=1)"), std::string::npos) << text;
  EXPECT_NE(text.find("n=1: no significance test"), std::string::npos) << text;  // no CI, no p
  EXPECT_EQ(text.find("[2.000, 2.000]"), std::string::npos) << text;
  EXPECT_NE(text.find("--repetitions"), std::string::npos) << text;
  const std::string md = render_comparison(c, "md");
  EXPECT_NE(md.find("| worse (n=1) |"), std::string::npos) << md;
  EXPECT_NE(md.find("--repetitions"), std::string::npos) << md;
  const auto j = nlohmann::json::parse(render_comparison(c, "json"));
  EXPECT_EQ(j["metrics"][0]["significance"], "none");
  EXPECT_EQ(j["metrics"][0]["verdict"], "worse");
  EXPECT_EQ(j["metrics"][0]["ci_lo"], 2.0);  // JSON keeps the numbers
  // With enough samples there is no footnote.
  const Comparison tested = compare_runs(one_case_run("a", {10, 10.2, 9.9, 10.1, 10.0}),
                                         one_case_run("b", {12, 12.1, 11.9, 12.2, 12.0}));
  EXPECT_EQ(render_comparison(tested, "text").find("--repetitions"), std::string::npos);
  EXPECT_EQ(nlohmann::json::parse(render_comparison(tested, "json"))["metrics"][0]["significance"], "u-test");
  // Nothing changed: the Markdown says so and draws no empty table.
  const Comparison same =
      compare_runs(one_case_run("a", {10, 10.2, 9.9, 10.1, 10.0}), one_case_run("b", {10, 10.2, 9.9, 10.1, 10.0}));
  const std::string same_md = render_comparison(same, "md");
  EXPECT_NE(same_md.find("0 of 1 rows: primary metrics that changed"), std::string::npos) << same_md;
  EXPECT_EQ(same_md.find("| case |"), std::string::npos) << same_md;
  EXPECT_NE(render_comparison(same, "md", true).find("| case |"), std::string::npos);
}

TEST(CompareTest, MatchesOnParamsKeyButShowsDisplayNames) {
  RunData base = one_case_run("a", {1, 2, 3}), cand = one_case_run("b", {1, 2, 3});
  cand.cases.front().label = "";  // the axis default changed: same params, another label
  base.cases.push_back(make_case("compress", {{"codec", "zstd"}, {"level", 3}}, {{"time_ms", {1}}}));
  base.cases.back().label = "level=3";
  const Comparison c = compare_runs(base, cand);
  ASSERT_EQ(c.metrics.size(), 1u);
  EXPECT_EQ(c.metrics[0].name, "moe_train/experts=8");  // the base run's name
  EXPECT_EQ(c.metrics[0].params_key, "experts=8");
  ASSERT_EQ(c.only_base.size(), 1u);
  EXPECT_EQ(c.only_base[0].name, "compress/level=3");
  const std::string text = render_comparison(c, "text");
  EXPECT_NE(text.find("compress/level=3  (base ok)"), std::string::npos) << text;
  EXPECT_EQ(text.find("codec=zstd"), std::string::npos) << text;
  const auto j = nlohmann::json::parse(render_comparison(c, "json"));
  EXPECT_EQ(j["metrics"][0]["case"], "moe_train/experts=8");
  EXPECT_EQ(j["only_base"][0]["case"], "compress/level=3");
  EXPECT_EQ(j["only_base"][0]["params_key"], "codec=zstd,level=3");
}

TEST(CompareTest, ListsCasesPresentInOnlyOneRunAndCasesNotOkInBoth) {
  RunData base = one_case_run("a", {1, 2, 3});
  RunData cand = one_case_run("b", {1, 2, 3});
  base.cases.push_back(make_case("compress", {{"codec", "zstd"}}, {{"time_ms", {1}}}));
  cand.cases.push_back(make_case("toolbench", {{"model", "mock"}}, {{"time_ms", {1}}}));
  cand.cases.front().status = reports::CaseStatus::Failed;
  const Comparison c = compare_runs(base, cand);
  ASSERT_EQ(c.only_base.size(), 1u);
  EXPECT_EQ(c.only_base[0].workload, "compress");
  ASSERT_EQ(c.only_cand.size(), 1u);
  EXPECT_EQ(c.only_cand[0].workload, "toolbench");
  ASSERT_EQ(c.not_compared.size(), 1u);
  EXPECT_EQ(c.not_compared[0].cand_status, CaseStatus::Failed);
  EXPECT_TRUE(c.metrics.empty());
  ASSERT_EQ(c.new_failures().size(), 1u);  // ok in the base, failed in the candidate
  EXPECT_EQ(c.new_failures()[0].workload, "moe_train");
  EXPECT_TRUE(compare_runs(cand, base).new_failures().empty());  // a fixed case is no new failure
}

// The same case run on other ranks pairs with nothing, and each list says where its case ran.
TEST(CompareTest, TheSameCaseOnOtherRanksIsNamedWithItsRanks) {
  RunData base = one_case_run("a", {1, 2, 3});
  RunData cand = one_case_run("b", {1, 2, 3});
  base.cases[0].comm = "mpi", base.cases[0].ranks = 2;
  cand.cases[0].comm = "mpi", cand.cases[0].ranks = 4;
  cand.cases.push_back(make_case("compress", {{"codec", "zstd"}}, {{"time_ms", {1}}}));
  const Comparison c = compare_runs(base, cand);
  EXPECT_TRUE(c.metrics.empty());
  ASSERT_EQ(c.only_base.size(), 1u);
  EXPECT_EQ(c.only_base[0].name, "moe_train/experts=8 (mpi, 2 ranks)");
  ASSERT_EQ(c.only_cand.size(), 2u);
  EXPECT_EQ(c.only_cand[0].name, "moe_train/experts=8 (mpi, 4 ranks)");
  EXPECT_EQ(c.only_cand[1].name, "compress") << "in neither run elsewhere: its name alone";
}

TEST(CompareTest, RendersTextJsonAndMarkdown) {
  const RunData base = one_case_run("a", {10, 10.2, 9.9, 10.1, 10.0}), cand = one_case_run("b", {12, 12.1, 11.9, 12.2, 12.0});
  const Comparison c = compare_runs(base, cand, kTwoRun);
  const std::string text = render_comparison(c, "text");
  EXPECT_NE(text.find("case"), std::string::npos);
  EXPECT_NE(text.find("moe_train/experts=8"), std::string::npos);
  EXPECT_NE(text.find("worse"), std::string::npos);
  EXPECT_NE(text.find("primary-metric regression: yes"), std::string::npos);
  // The case on its own line, then its metric's row: the verdict column starts at the same offset on the
  // header and the row; no line is wider than 100 columns.
  const auto header_at = text.find("case / metric");
  const std::string header = text.substr(header_at, text.find('\n', header_at) - header_at);
  const auto case_at = text.find('\n', header_at) + 1;
  EXPECT_EQ(text.substr(case_at, text.find('\n', case_at) - case_at), "moe_train/experts=8") << text;
  const auto row_at = text.find('\n', case_at) + 1;
  const std::string row = text.substr(row_at, text.find('\n', row_at) - row_at);
  EXPECT_EQ(header.find("verdict"), row.find("worse")) << header << "\n" << row;
  for (const auto& line : split(text, '\n')) EXPECT_LE(line.size(), 100u) << line;
  const auto j = nlohmann::json::parse(render_comparison(c, "json"));
  EXPECT_EQ(j["schema"], "mlsysbench.compare/1");
  EXPECT_EQ(j["regression"], true);
  EXPECT_EQ(j["metrics"][0]["verdict"], "worse");
  const std::string md = render_comparison(c, "md");
  EXPECT_NE(md.find("| case | metric |"), std::string::npos);
  EXPECT_NE(md.find("| worse |"), std::string::npos);
  EXPECT_THROW(render_comparison(c, "xml"), std::invalid_argument);
  EXPECT_THROW(compare_runs(base, cand, {.threshold = 0.05, .alpha = 0}), std::invalid_argument);
}

TEST(CompareTest, EveryRenderingNamesTheCommitsDatesBranchAndMachineOfBothRuns) {
  RunData base = one_case_run("a", {10, 10.2, 9.9, 10.1, 10.0}), cand = one_case_run("b", {12, 12.1, 11.9, 12.2, 12.0});
  base.run.git_sha = "1111111111aaaa", cand.run.git_sha = "2222222222bbbb";
  base.run.branch = cand.run.branch = "main";
  base.run.started_at = 1764986400;  // 2025-12-06 02:00:00 UTC
  cand.run.started_at = 1765072800;  // a day later
  base.run.machine_key = cand.run.machine_key = "9f8e7d6c5b4a";
  cand.run.env = {{"kernel", "6.12"}};
  const Comparison c = compare_runs(base, cand, kTwoRun);
  for (const char* format : {"text", "md", "html"}) {
    const std::string out = render_comparison(c, format);
    for (const char* part : {"1111111111..2222222222", "2025-12-06 02:00:00 UTC", "2025-12-07 02:00:00 UTC", " on main",
                             "machine 9f8e7d6c", "kernel: (none) ", " 6.12"})
      EXPECT_NE(out.find(part), std::string::npos) << format << " lacks '" << part << "':\n" << out;
  }
  const auto j = nlohmann::json::parse(render_comparison(c, "json"));
  EXPECT_EQ(j["base"]["git_sha"], "1111111111aaaa");
  EXPECT_EQ(j["cand"]["branch"], "main");
  EXPECT_EQ(j["base"]["started_at"], "2025-12-06T02:00:00Z");
  EXPECT_EQ(j["cand"]["machine_key"], "9f8e7d6c5b4a");
  EXPECT_EQ(j["commits"], "1111111111..2222222222");
  EXPECT_EQ(j["environment_differences"][0], "kernel: (none) -> 6.12");
  // The HTML page puts the verdict first, and its banner names why the gate fails.
  const std::string html = render_comparison(c, "html");
  EXPECT_NE(html.find("<th>verdict</th><th>case</th>"), std::string::npos);
  EXPECT_NE(html.find("REGRESSION: 1 primary metric worse"), std::string::npos) << html;
}

// The text table `compare` prints, for fixture_run against a candidate where one case got slower (worse), one
// single-sample case faster (better, n=1), one metric within the run-to-run noise (noisy, with why), the
// failed and skipped cases not compared, one case gone and one new. CIs and p-values are placeholders; medians, ratios
// and verdicts are literal.
TEST(CompareTest, TextAndMarkdownMatchTheirGoldenFiles) {
  const RunData base = test::fixture_run();
  RunData cand = base;
  cand.run.id = 8;
  cand.run.uuid = "3f2a9c1e-0000-4000-8000-000000000002";
  const auto resampled = [](const CaseRecord& c, const std::map<std::string, std::vector<double>>& samples) {
    CaseRecord r = make_case(c.workload, c.params, samples, c.status, c.reason);
    r.label = c.label;
    return r;
  };
  cand.cases[0] = resampled(base.cases[0], {{"time_ms", {15.0, 15.75, 16.5, 15.3, 16.2}},  // 1.5x slower
                                            {"bw", {110, 107.8, 112.2, 111.1, 108.9}}});   // 1.1x: within the noise
  cand.cases[1] = resampled(base.cases[1], {{"time_ms", {6.0}}, {"bw", {90}}});            // 2x faster, one sample
  cand.cases.pop_back();  // toolbench: only in the base
  cand.cases.push_back(make_case("moe_train", {{"experts", 32}, {"topk", 2}}, {{"time_ms", {11.0}}}));
  cand.cases.back().label = "experts=32";  // only in the candidate
  mlsb::test::expect_golden(mlsb::test::golden_file("reports", "compare.txt"),
                            render_comparison(compare_runs(base, cand), "text", /*all=*/true));
  // The Markdown of the same pair: the pull-request comment, with only the changed primary metrics.
  mlsb::test::expect_golden(mlsb::test::golden_file("reports", "compare.md"),
                            render_comparison(compare_runs(base, cand), "md"));
}

}  // namespace
}  // namespace mlsb::reports
