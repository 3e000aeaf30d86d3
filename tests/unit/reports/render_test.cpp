// Report renderers: golden files for JSON, Markdown, gbench and the CI trend formats (bmf, gab, gab-bigger),
// HTML structure and escaping, the 1,000-case render budget, and gbench output read by Google Benchmark's
// compare.py.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "reports/bench/synthetic_run.hpp"
#include "reports/case_names.hpp"
#include "reports/render.hpp"
#include "support/golden.hpp"
#include "support/test_support.hpp"
#include "unit/reports/fixtures.hpp"

namespace mlsb::reports {
namespace {

namespace fs = std::filesystem;

void expect_golden(const std::string& name, const std::string& actual) {
  mlsb::test::expect_golden(mlsb::test::golden_file("reports", name), actual);
}

TEST(ReportsRenderTest, ParsesFormatNames) {
  EXPECT_EQ(parse_format("json"), Format::Json);
  EXPECT_EQ(parse_format("html"), Format::Html);
  EXPECT_EQ(parse_format("md"), Format::Md);
  EXPECT_EQ(parse_format("gbench"), Format::Gbench);
  for (const Format f : {Format::Bmf, Format::Gab, Format::GabBigger}) EXPECT_EQ(parse_format(to_string(f)), f);
  EXPECT_EQ(to_string(Format::GabBigger), "gab-bigger");
  try {
    parse_format("pdf");
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("json, html, md, gbench, bmf, gab or gab-bigger"), std::string::npos)
        << e.what();
  }
}

TEST(ReportsRenderTest, JsonMatchesGoldenFile) {
  expect_golden("report.json", render(test::fixture_run_nightly(), Format::Json));
}

TEST(ReportsRenderTest, MarkdownMatchesGoldenFile) { expect_golden("report.md", render(test::fixture_run(), Format::Md)); }

TEST(ReportsRenderTest, GbenchMatchesGoldenFile) {
  expect_golden("report.gbench.json", render(test::fixture_run(), Format::Gbench));
}

TEST(ReportsRenderTest, TrendFormatsMatchGoldenFiles) {
  expect_golden("report.bmf.json", render(test::fixture_run(), Format::Bmf));
  expect_golden("report.gab.json", render(test::fixture_run(), Format::Gab));
  expect_golden("report.gab-bigger.json", render(test::fixture_run(), Format::GabBigger));
}

// The shapes the consumers document: Bencher's BMF schema (https://bencher.dev/bmf.json: benchmark -> measure ->
// {"value", "lower_value", "upper_value"} numbers) and github-action-benchmark's custom JSON (an array of
// {"name", "unit", "value", "range", "extra"}); gab and gab-bigger partition the metrics by direction.
TEST(ReportsRenderTest, TrendFormatsHaveTheDocumentedShapesAndSplitMetricsByDirection) {
  RunData run = test::fixture_run();
  run.cases.push_back(run.cases[0]);  // the same case on 4 MPI ranks: its name must still be unique
  run.cases.back().comm = "mpi";
  run.cases.back().ranks = 4;
  // What should be reported: (display name, metric) -> direction, for every ok case's metric with samples.
  std::map<std::pair<std::string, std::string>, Better> expected;
  const auto names = case_display_names(run.cases);
  for (size_t i = 0; i < run.cases.size(); ++i)
    for (const auto& s : run.cases[i].summaries)
      if (run.cases[i].status == reports::CaseStatus::Ok) expected[{names[i], s.metric}] = s.better;
  ASSERT_EQ(expected.size(), 7u);  // 3 x (time_ms, bw) + toolbench's time_ms

  const auto bmf = nlohmann::json::parse(render(run, Format::Bmf));
  ASSERT_TRUE(bmf.is_object());
  size_t leaves = 0;
  for (const auto& [benchmark, measures] : bmf.items()) {
    ASSERT_TRUE(measures.is_object()) << benchmark;
    for (const auto& [measure, metric] : measures.items()) {
      ++leaves;
      EXPECT_TRUE(expected.count({benchmark, measure})) << benchmark << " " << measure;
      ASSERT_TRUE(metric.is_object());
      EXPECT_EQ(metric.size(), 3u);
      for (const char* key : {"value", "lower_value", "upper_value"})
        EXPECT_TRUE(metric.contains(key) && metric[key].is_number()) << benchmark << " " << measure << " " << key;
      EXPECT_LE(metric["lower_value"].get<double>(), metric["value"].get<double>());
      EXPECT_LE(metric["value"].get<double>(), metric["upper_value"].get<double>());
    }
  }
  EXPECT_EQ(leaves, expected.size());

  std::set<std::string> seen;
  for (const auto& [format, better] : {std::pair{Format::Gab, Better::Lower}, {Format::GabBigger, Better::Higher}}) {
    const auto gab = nlohmann::json::parse(render(run, format));
    ASSERT_TRUE(gab.is_array()) << to_string(format);
    for (const auto& e : gab) {
      for (const char* key : {"name", "unit", "range", "extra"})
        EXPECT_TRUE(e.contains(key) && e[key].is_string()) << e.dump() << " " << key;
      EXPECT_TRUE(e.contains("value") && e["value"].is_number()) << e.dump();
      bool matched = false;
      for (const auto& [key, direction] : expected)
        if (e["name"] == key.first + " " + key.second) {
          matched = true;
          EXPECT_EQ(direction, better) << e["name"] << " is in " << to_string(format);
        }
      EXPECT_TRUE(matched) << e["name"];
      EXPECT_TRUE(seen.insert(e["name"].get<std::string>()).second) << e["name"] << " twice";
    }
  }
  EXPECT_EQ(seen.size(), expected.size());  // together, gab and gab-bigger hold every metric exactly once
}

TEST(ReportsRenderTest, GoldenMatcherRejectsADifferentNumber) {
  EXPECT_EQ(mlsb::test::golden_mismatch("a {{num}} b\n", "a 1.5e-3 b\n"), "");
  EXPECT_NE(mlsb::test::golden_mismatch("a 1.5 b\n", "a 1.6 b\n"), "");
  EXPECT_NE(mlsb::test::golden_mismatch("a {{num}} b\n", "a x b\n"), "");
  EXPECT_NE(mlsb::test::golden_mismatch("a\n", "a\nb\n"), "");
  EXPECT_NE(mlsb::test::golden_mismatch("a\n", "a"), "");
}

TEST(ReportsRenderTest, JsonCarriesEveryCaseWithStatsSamplesAndItems) {
  const auto j = nlohmann::json::parse(render(test::fixture_run(), Format::Json));
  EXPECT_EQ(j["schema"], "mlsysbench.report/1");
  ASSERT_EQ(j["cases"].size(), 5u);
  const auto& c = j["cases"][0];
  EXPECT_EQ(c["params_key"], "experts=8,topk=2");
  EXPECT_EQ(c["label"], "experts=8");
  EXPECT_EQ(c["name"], "moe_train/experts=8");
  EXPECT_EQ(j["cases"][4]["name"], "toolbench");
  EXPECT_EQ(j["cases"][1]["summaries"]["time_ms"]["ci_lo"], 12.0);  // n = 1: JSON keeps the numbers
  EXPECT_EQ(c["summaries"]["time_ms"]["unit"], "ms");
  EXPECT_EQ(c["summaries"]["time_ms"]["better"], "lower");
  EXPECT_EQ(c["summaries"]["time_ms"]["median"], 10.5);
  EXPECT_EQ(c["samples"]["time_ms"].size(), 5u);
  EXPECT_EQ(j["cases"][2]["status"], "failed");
  EXPECT_EQ(j["cases"][4]["items"].size(), 3u);
  EXPECT_EQ(j["cases"][4]["items"][1]["data"]["pass"], false);
}

TEST(ReportsRenderTest, HtmlIsSelfContainedEscapedAndHasChartsAndTaskTables) {
  const std::string html = render(test::fixture_run(), Format::Html);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_EQ(html.find("url("), std::string::npos);
  EXPECT_EQ(html.find("https://"), std::string::npos);
  EXPECT_NE(html.find("default-src 'none'"), std::string::npos);
  EXPECT_NE(html.find("<svg"), std::string::npos);
  EXPECT_NE(html.find("class=\"err\""), std::string::npos);  // error bars
  EXPECT_NE(html.find("gradient mismatch | max err &lt;0.5&gt; &amp; more"), std::string::npos);
  EXPECT_EQ(html.find("<0.5>"), std::string::npos);
  EXPECT_NE(html.find("skipped: needs cuda"), std::string::npos);
  EXPECT_NE(html.find("Read &lt;notes&gt; &amp; &quot;todo&quot;"), std::string::npos);
  EXPECT_NE(html.find("<th>AST accuracy</th>"), std::string::npos);
  EXPECT_NE(html.find("<td>filesystem</td><td class=\"num\">2</td><td class=\"num\">2</td><td class=\"num\">50.0%</td>"), std::string::npos);
  EXPECT_NE(html.find("argument path differs"), std::string::npos);
  EXPECT_NE(html.find("read_file({&quot;path&quot;:&quot;/b&quot;})"), std::string::npos);  // actual call
}

// Occurrences of `needle` in `hay`.
size_t count(const std::string& hay, const std::string& needle) {
  size_t n = 0;
  for (auto at = hay.find(needle); at != std::string::npos; at = hay.find(needle, at + 1)) ++n;
  return n;
}

TEST(ReportsRenderTest, HtmlNamesCasesByLabelAndChartsOnlyMetricsWithTwoCases) {
  const std::string html = render(test::fixture_run(), Format::Html);
  EXPECT_NE(html.find("<td class=\"text\">moe_train/<wbr>experts=8</td>"), std::string::npos);
  EXPECT_NE(html.find("<td class=\"text\">toolbench</td>"), std::string::npos);
  EXPECT_NE(html.find("<h3>Tasks: toolbench</h3>"), std::string::npos);
  EXPECT_EQ(html.find("experts=8,topk=2"), std::string::npos);  // no params_key where a label exists
  // moe_train's time_ms and bw have two ok cases each; toolbench's time_ms has one: no chart for it...
  EXPECT_EQ(count(html, "<svg"), 2u);
  EXPECT_EQ(html.find("<title>toolbench"), std::string::npos);
  // Bars are labelled by what differs between the cases: the workload is the chart's.
  EXPECT_NE(html.find("y=\"21.0\">experts=8</text>"), std::string::npos);
  // ...but every metric's median [CI] is in the metrics tables.
  EXPECT_EQ(count(html, "<table class=\"metrics\">"), 2u);
  EXPECT_NE(html.find("<td class=\"text\">toolbench</td><td class=\"num\">51.00 ["), std::string::npos);
}

// Toolbench cases side by side: per category pass / AST for each agent, the oracle marked as the
// ceiling and the heuristic as the floor, and (HTML) a pass-rate chart per category with all of them.
TEST(ReportsRenderTest, ToolbenchAgentsSideBySidePerCategory) {
  RunData d;
  d.run.uuid = "side-by-side";
  const auto add = [&](const std::string& agent, std::vector<bool> passes) {
    auto c = test::make_case("toolbench", {{"agent", agent}}, {{"time_ms", {1}}});
    c.label = agent == "oracle" ? "" : "agent=" + agent;
    c.items = {test::task_item("t1", "filesystem", "read_file", passes[0], passes[0], passes[0] ? "" : "wrong"),
               test::task_item("t2", "filesystem", "read_file", passes[1], passes[1], passes[1] ? "" : "wrong"),
               test::task_item("t3", "memory", "create_entities", passes[2], passes[2], passes[2] ? "" : "wrong")};
    d.cases.push_back(std::move(c));
  };
  add("oracle", {true, true, true});
  add("heuristic", {true, false, false});
  add("openai", {true, true, false});
  const std::string md = render(d, Format::Md);
  EXPECT_NE(md.find("### Agents side by side"), std::string::npos) << md;
  EXPECT_NE(md.find("| category | toolbench (ceiling): pass / AST | toolbench/agent=heuristic (floor): pass / AST | "
                    "toolbench/agent=openai: pass / AST |"), std::string::npos) << md;
  EXPECT_NE(md.find("| filesystem | 100.0% / 100.0% (2) | 50.0% / 50.0% (2) | 100.0% / 100.0% (2) |"),
            std::string::npos) << md;
  EXPECT_NE(md.find("| memory | 100.0% / 100.0% (1) | 0.0% / 0.0% (1) | 0.0% / 0.0% (1) |"), std::string::npos) << md;
  EXPECT_NE(md.find("| all | 100.0% / 100.0% (3) | 33.3% / 33.3% (3) | 66.7% / 66.7% (3) |"), std::string::npos) << md;
  const std::string html = render(d, Format::Html);
  EXPECT_NE(html.find("<h3>Agents side by side</h3>"), std::string::npos);
  for (const char* chart : {"pass rate, filesystem (higher is better)", "pass rate, memory (higher is better)",
                            "pass rate, all categories (higher is better)"})
    EXPECT_NE(html.find(chart), std::string::npos) << chart;
  EXPECT_NE(html.find(">toolbench/agent=heuristic (floor)</text>"), std::string::npos);

  d.cases.resize(1);  // one agent: nothing to put side by side
  EXPECT_EQ(render(d, Format::Md).find("Agents side by side"), std::string::npos);
}

// Five samples (repetitions) of the same tasks: a task that fails every time is one row "failed 5 of 5"
// naming the samples, the counts tell tasks from trials, and a trial without a tool call adds no latency.
// The failures of a reference agent (heuristic: the floor) fold away; an LLM agent's stay open.
TEST(ReportsRenderTest, TaskFailuresAreOneRowPerTaskAndReferenceAgentsFold) {
  RunData d;
  d.run.uuid = "folds";
  for (const std::string agent : {"heuristic", "openai"}) {
    auto c = test::make_case("toolbench", {{"agent", agent}}, {{"time_ms", {1, 1, 1, 1, 1}}});
    c.label = "agent=" + agent;
    for (int sample = 0; sample < 5; ++sample) {
      c.items.push_back(test::task_item("t1", "filesystem", "read_file", true, true, ""));
      auto failing = test::task_item("t2", "filesystem", "read_file", false, false, "wrong path");
      if (sample % 2) failing.second["calls"] = nlohmann::json::array(), failing.second["latency_ms"] = 0;
      c.items.push_back(failing);
    }
    d.cases.push_back(std::move(c));
  }
  const std::string md = render(d, Format::Md);
  EXPECT_EQ(count(md, "| t2 | 5 of 5 | s0/t0, s1/t0, s2/t0, s3/t0, s4/t0 |"), 2u) << md;
  EXPECT_EQ(count(md, "1 task failed in 5 of 10 trials"), 2u) << md;
  EXPECT_NE(md.find("| all | 2 | 10 | 50.0% | 50.0% | 12.50 |"), std::string::npos) << md;  // 0 ms trials left out
  EXPECT_NE(md.find("<details><summary>1 task failed in 5 of 10 trials (the floor agent: a reference point)"),
            std::string::npos) << md;
  const std::string html = render(d, Format::Html);
  EXPECT_EQ(count(html, "<details><summary>1 task failed in 5 of 10 trials (the floor agent"), 1u);
  EXPECT_EQ(count(html, "<p>1 task failed in 5 of 10 trials</p>"), 1u);  // the openai agent's, open
}

// A report too long for a pull-request comment is cut at a line, under kMaxMarkdownBytes, and says where the
// rest is.
TEST(ReportsRenderTest, MarkdownIsCutBelowAPullRequestCommentsLimit) {
  RunData d;
  d.run.uuid = "0123abcd-long";
  auto c = test::make_case("toolbench", {{"agent", "openai"}}, {{"time_ms", {1}}});
  for (int i = 0; i < 1500; ++i)
    c.items.push_back(test::task_item("t" + std::to_string(i), "filesystem", "read_file", false, false, "wrong"));
  d.cases.push_back(std::move(c));
  const std::string md = render(d, Format::Md);
  EXPECT_LE(md.size(), kMaxMarkdownBytes);
  EXPECT_GT(md.size(), kMaxMarkdownBytes - 2000);
  EXPECT_NE(md.find("**Cut here**"), std::string::npos);
  EXPECT_NE(md.find("mlsysbench report 0123abcd -o report.html"), std::string::npos);
  EXPECT_EQ(md[md.rfind("\n\n**Cut here**") - 1], '|') << "cut at the end of a table row";
}

TEST(ReportsRenderTest, ASingleSampleShowsNoNoiseEstimate) {
  const std::string dash = "\xE2\x80\x94";
  const std::string html = render(test::fixture_run(), Format::Html);
  EXPECT_NE(html.find("<td class=\"num\">12.00 ms</td><td class=\"num\">" + dash + "</td><td class=\"num\">1</td>"
                      "<td class=\"num\">" + dash + "</td>"),
            std::string::npos);
  EXPECT_NE(html.find("<td class=\"num\">12.00 " + dash + "</td>"), std::string::npos);  // metrics table
  const std::string md = render(test::fixture_run(), Format::Md);
  EXPECT_NE(md.find("| 12.00 ms | " + dash + " | 1 | " + dash + " |"), std::string::npos) << md;
}

TEST(ReportsRenderTest, AThrottledCaseIsMarkedWithItsReasons) {
  RunData run = test::fixture_run();
  for (Format f : {Format::Html, Format::Md}) {
    EXPECT_EQ(render(run, f).find(", throttled"), std::string::npos);
    EXPECT_EQ(render(run, f).find("throttled: the GPU"), std::string::npos);
  }
  run.cases[0].throttled = true;
  run.cases[0].gpu = {{"before", nlohmann::json::array()}, {"after", nlohmann::json::array()},
                      {"throttle_reasons", nlohmann::json::array({"sw_power_cap", "sw_thermal_slowdown"})}};
  const std::string md = render(run, Format::Md);
  EXPECT_NE(md.find("| ok, throttled (sw_power_cap, sw_thermal_slowdown) | time_ms |"), std::string::npos) << md;
  EXPECT_NE(md.find("\nthrottled: the GPU slowed its clocks"), std::string::npos) << md;
  EXPECT_EQ(md.find("throttled: the GPU"), md.rfind("throttled: the GPU"));  // once: toolbench has none
  const std::string html = render(run, Format::Html);
  EXPECT_NE(html.find("<tr class=\"st-ok throttled\">"), std::string::npos);
  EXPECT_NE(html.find(">ok, throttled (sw_power_cap, sw_thermal_slowdown)</td>"), std::string::npos);
  EXPECT_NE(html.find("<p>throttled: the GPU slowed its clocks"), std::string::npos);
  run.cases[1].throttled = true;  // no reasons recorded: the mark alone
  run.cases[1].reason = "noisy";
  EXPECT_NE(render(run, Format::Md).find("| ok, throttled: noisy |"), std::string::npos);
}

TEST(ReportsRenderTest, CollidingDisplayNamesFallBackToTheParamsKey) {
  RunData run = test::fixture_run();
  run.cases[1].label = run.cases[0].label;  // two cases would both be "moe_train/experts=8"
  for (Format f : {Format::Html, Format::Md, Format::Gbench}) {
    std::string out = render(run, f);
    for (size_t at; (at = out.find("<wbr>")) != std::string::npos;) out.erase(at, 5);  // HTML's break points
    EXPECT_NE(out.find("moe_train/experts=8,topk=2"), std::string::npos) << to_string(f);
    EXPECT_NE(out.find("moe_train/experts=16,topk=2"), std::string::npos) << to_string(f);
    if (f != Format::Gbench) {  // gbench has only ok cases
      EXPECT_NE(out.find("moe_train/experts=64"), std::string::npos) << to_string(f);  // its label is unique
    }
  }
}

TEST(ReportsRenderTest, GbenchContextComesFromTheCapturedEnvironment) {
  const auto j = nlohmann::json::parse(render(test::fixture_run(), Format::Gbench));
  EXPECT_EQ(j["context"]["host_name"], "node-1");
  EXPECT_EQ(j["context"]["num_cpus"], 2);
  EXPECT_EQ(j["benchmarks"][0]["name"], "moe_train/experts=8");
  RunData bare = test::fixture_run();
  bare.run.env = nlohmann::json::object();
  const auto k = nlohmann::json::parse(render(bare, Format::Gbench));
  EXPECT_TRUE(k["context"]["host_name"].is_null());
  EXPECT_TRUE(k["context"]["num_cpus"].is_null());
}

// Scale, not speed: bench_store's BM_RenderHtml1000Cases times the render (target < 2 s). Two metrics
// (one lower-, one higher-is-better) of five samples keep the fixture's bootstrap summaries cheap under ASan.
TEST(ReportsRenderTest, RendersAThousandCaseRunWithEveryCase) {
  const RunData run = bench::synthetic_run(1000, 2, 5, 4);
  for (Format f :
       {Format::Html, Format::Json, Format::Md, Format::Gbench, Format::Bmf, Format::Gab, Format::GabBigger}) {
    const std::string out = render(run, f);
    if (f == Format::Md) {  // cut for a pull-request comment, saying so
      EXPECT_NE(out.find("size=0"), std::string::npos);
      EXPECT_NE(out.find("**Cut here**"), std::string::npos);
      continue;
    }
    for (const char* name : {"size=0", "size=500", "size=999"})  // all three are ok cases (gbench keeps only those)
      EXPECT_NE(out.find(name), std::string::npos) << to_string(f) << " lacks " << name;
  }
}

TEST(ReportsRenderTest, EmptyRunRendersInEveryFormat) {
  RunData empty;
  empty.run.uuid = "u";
  for (Format f : {Format::Json, Format::Html, Format::Md, Format::Gbench, Format::Bmf, Format::Gab, Format::GabBigger})
    EXPECT_FALSE(render(empty, f).empty());
}

// compare.py needs scipy; Debian's /usr/bin/python3 has it (a python3 earlier on PATH may not).
std::string python_with_scipy() {
  for (const char* py : {"/usr/bin/python3", "python3"})
    if (mlsb::test::run_shell(std::string(py) + " -c 'import scipy'").exit_code == 0) return py;
  return "";
}

TEST(ReportsGbenchTest, CompareDotPyReadsTwoRuns) {
  const fs::path compare_py = "/usr/share/benchmark/compare.py";
  const std::string python = python_with_scipy();
  if (!fs::exists(compare_py) || python.empty()) GTEST_SKIP() << "compare.py or python3 with scipy absent";
  mlsb::test::TempDir tmp;
  RunData base = test::fixture_run(), cand = test::fixture_run();
  for (double& v : cand.cases[0].samples["time_ms"]) v *= 2;  // twice as slow
  mlsb::test::write_file(tmp / "a.json", render(base, Format::Gbench));
  mlsb::test::write_file(tmp / "b.json", render(cand, Format::Gbench));
  const auto r = mlsb::test::run_shell(python + " " + compare_py.string() + " --no-color benchmarks " +
                                       (tmp / "a.json").string() + " " + (tmp / "b.json").string());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("moe_train/experts=8"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("+1.0000"), std::string::npos) << r.out;  // compare.py's relative change: 2x slower
  EXPECT_NE(r.out.find("toolbench "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("_pvalue"), std::string::npos) << r.out;  // the U test over the repetitions
  EXPECT_EQ(r.err.find("Traceback"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace mlsb::reports
