// Series items ("series/<name>/<i>") become line charts in the HTML report; malformed items are skipped.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <tuple>

#include "reports/detail/series_items.hpp"
#include "reports/detail/svg_chart.hpp"
#include "reports/render.hpp"
#include "unit/reports/fixtures.hpp"

namespace mlsb::reports {
namespace {

TEST(SeriesItems, CollectsNumericPointsPerSeriesInOrder) {
  CaseRecord c;
  c.items = {{"series/loss/0", {{"x", 0}, {"y", 5.5}}},
             {"series/loss/1", {{"x", 1}, {"y", 4.0}, {"aux_loss", 0.1}}},
             {"series/lr/0", {{"x", 0}, {"y", 0.01}}},
             {"series/loss/2", {{"x", "two"}, {"y", 3.0}}},  // not a number: skipped
             {"series/bad", {{"x", 0}, {"y", 1}}},           // no index: skipped
             {"task/u/0", {{"x", 0}, {"y", 1}}}};
  const auto s = detail::collect_series(c);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].name, "loss");
  EXPECT_THAT(s[0].points, testing::ElementsAre(std::pair(0.0, 5.5), std::pair(1.0, 4.0)));
  EXPECT_EQ(s[0].x_label, "step");  // no chart item: the defaults
  EXPECT_EQ(s[0].y_label, "loss");
  EXPECT_FALSE(s[0].options.columns);
  EXPECT_EQ(s[1].name, "lr");
  EXPECT_EQ(s[1].points.size(), 1u);
}

TEST(SeriesItems, AChartItemNamesTheAxesAndAddsMarksAndColumns) {
  CaseRecord c;
  c.items = {{"series/loss/0", {{"x", 0}, {"y", 5.5}}},
             {"chart/loss",
              {{"caption", "training loss (nats/byte)"},
               {"x_label", "step"},
               {"y_label", "loss (nats/byte)"},
               {"marks", {{{"y", 2.5}, {"label", "eval loss"}}, {{"y", "high"}}}}}},
             {"series/expert_load/0", {{"x", 0}, {"y", 10}}},
             {"chart/expert_load", {{"x_label", 3}, {"kind", "columns"}}},  // a number is no label: ignored
             {"chart/unused", {{"y_label", "no series"}}}};
  const auto s = detail::collect_series(c);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].name, "expert_load");
  EXPECT_TRUE(s[0].options.columns);
  EXPECT_EQ(s[0].x_label, "step");
  EXPECT_EQ(s[0].caption, "expert_load");  // no caption: the y axis's name, here the series'
  EXPECT_EQ(s[1].caption, "training loss (nats/byte)");
  EXPECT_EQ(s[1].y_label, "loss (nats/byte)");
  ASSERT_EQ(s[1].options.marks.size(), 1u);  // the mark without a numeric y is skipped
  EXPECT_EQ(s[1].options.marks[0].y, 2.5);
  EXPECT_EQ(s[1].options.marks[0].label, "eval loss");
}

// Tick values compared after rounding away the floating-point noise of k * step.
std::vector<double> rounded(std::vector<double> v) {
  for (double& x : v) x = std::round(x * 1e9) / 1e9;
  return v;
}

TEST(XyChart, NiceTicksCoverTheRangeInRoundSteps) {
  EXPECT_THAT(rounded(detail::nice_ticks(0, 1)), testing::ElementsAre(0, 0.2, 0.4, 0.6, 0.8, 1));
  EXPECT_THAT(rounded(detail::nice_ticks(3.1, 5.4)), testing::ElementsAre(3, 3.5, 4, 4.5, 5, 5.5));
  EXPECT_THAT(rounded(detail::nice_ticks(-20, 70)), testing::ElementsAre(-20, 0, 20, 40, 60, 80));
  EXPECT_THAT(rounded(detail::nice_ticks(0, 3, 8)), testing::ElementsAre(0, 0.5, 1, 1.5, 2, 2.5, 3));
  EXPECT_THAT(rounded(detail::nice_ticks(0, 3, 8, /*integers=*/true)), testing::ElementsAre(0, 1, 2, 3));
  EXPECT_THAT(rounded(detail::nice_ticks(5, 5, 3)), testing::ElementsAre(4.5, 5, 5.5));  // a span around one value
  EXPECT_THAT(rounded(detail::nice_ticks(0, 0, 3)), testing::ElementsAre(-1, 0, 1));
  // Values apart by rounding only (0.3 and 0.1 + 0.2) are one value, not 10^16 ticks; huge spans and
  // non-finite ends give a few ticks.
  EXPECT_THAT(rounded(detail::nice_ticks(0.3, 0.1 + 0.2, 3)), testing::ElementsAre(0.25, 0.3, 0.35));
  EXPECT_LE(detail::nice_ticks(-1e308, 1e308).size(), 100u);
  EXPECT_GE(detail::nice_ticks(-1e308, 1e308).size(), 2u);
  EXPECT_THAT(detail::nice_ticks(NAN, 1), testing::ElementsAre(0, 1));
}

TEST(XyChart, LineChartDrawsOnePathTicksAndMarks) {
  const std::string svg =
      detail::line_chart_svg("loss <curve>", "step", "loss (nats/byte)", {{0, 5.5}, {1, 4.0}, {2, NAN}, {3, 3.0}},
                             {.marks = {{2.5, "eval loss"}}});
  // y from 2 to 6 (ticks of 1) over 220 px from y = 12: 5.5 is at 39.5; x from 0 to 3 in whole steps.
  EXPECT_THAT(svg, testing::HasSubstr("<path class=\"line\" d=\"M70.0 39.5L"));
  const size_t line = svg.find("class=\"line\"");
  const std::string path = svg.substr(line, svg.find("/>", line) - line);
  EXPECT_EQ(std::count(path.begin(), path.end(), 'L'), 2) << "the non-finite point is left out";
  EXPECT_THAT(svg, testing::HasSubstr("loss &lt;curve&gt;"));
  for (const char* tick : {">2<", ">6<", ">0<", ">1<", ">3<"}) EXPECT_THAT(svg, testing::HasSubstr(tick));
  EXPECT_THAT(svg, testing::Not(testing::HasSubstr(">0.5<")));  // steps are whole: no tick between them
  EXPECT_THAT(svg, testing::HasSubstr(">loss (nats/byte)</text>"));
  EXPECT_THAT(svg, testing::HasSubstr("class=\"mark\""));
  EXPECT_THAT(svg, testing::HasSubstr(">eval loss 2.500</text>"));
  EXPECT_THAT(svg, testing::HasSubstr("<title>step 1: 4.000</title>"));
  EXPECT_THAT(detail::line_chart_svg("empty", "x", "y", std::vector<std::pair<double, double>>{}), testing::Not(testing::HasSubstr("class=\"line\"")));
  // A constant 0 (a non-negative series) gets no negative tick.
  EXPECT_THAT(detail::line_chart_svg("t", "x", "y", {{0, 0.0}, {1, 0.0}, {2, 0.0}}), testing::Not(testing::HasSubstr(">-")));
  // Fractional values are labelled in their shortest form.
  EXPECT_THAT(detail::line_chart_svg("t", "x", "y", {{0, 0.25}, {1, 0.5}, {2, 0.75}}), testing::HasSubstr(">0.3<"));
  // A curve stored once per repetition: one line each, never a diagonal from the last step back to the first.
  const std::string twice = detail::line_chart_svg("t", "step", "loss", {{0, 5}, {1, 4}, {2, 3}, {0, 5.1}, {1, 4.2}, {2, 3.1}});
  const size_t at = twice.find("class=\"line\"");
  const std::string d = twice.substr(at, twice.find("/>", at) - at);
  EXPECT_EQ(std::count(d.begin(), d.end(), 'M'), 2) << d;
  EXPECT_EQ(std::count(d.begin(), d.end(), 'L'), 4) << d;
}

// A reference line's label sits where no line passes: a loss curve that falls through the eval loss near its
// right end pushes the label to the left end, above or below the mark, off the curve.
TEST(XyChart, AMarkLabelMovesOffTheCurve) {
  std::vector<std::pair<double, double>> curve;
  for (int i = 0; i < 50; ++i) curve.push_back({i, 5.5 - 0.05 * i});  // 3.05 at the end: through 3.4 at step 42
  const std::string svg = detail::line_chart_svg("loss", "step", "loss", curve, {.marks = {{3.4, "eval loss"}}});
  EXPECT_THAT(svg, testing::HasSubstr("<text class=\"tick start mark-label\" x=\"74.0\""));
  // With the curve high on the left and low on the right, the right end above the mark is free.
  std::vector<std::pair<double, double>> flat;
  for (int i = 0; i < 50; ++i) flat.push_back({i, i < 10 ? 3.45 : 3.0});
  const std::string right = detail::line_chart_svg("loss", "step", "loss", flat, {.marks = {{3.4, "eval loss"}}});
  EXPECT_THAT(right, testing::HasSubstr("<text class=\"tick end mark-label\""));
}

TEST(XyChart, ColumnsAndLog2AxesLabelWithTheAxisUnits) {
  const std::string cols = detail::line_chart_svg("load", "expert", "tokens", {{0, 10}, {1, 30}, {2, 20}},
                                                  {.columns = true, .marks = {{20, "balanced"}}});
  size_t rects = 0;
  for (size_t at = cols.find("<rect class=\"bar\""); at != std::string::npos;
       at = cols.find("<rect class=\"bar\"", at + 1))
    ++rects;
  EXPECT_EQ(rects, 3u);
  EXPECT_THAT(cols, testing::HasSubstr("<title>expert 1: 30.00</title>"));
  EXPECT_THAT(cols, testing::Not(testing::HasSubstr("class=\"line\"")));
  const std::string sweep = detail::line_chart_svg("t", "elements", "ms", {{1024, 1}, {65536, 2}, {1 << 20, 3}},
                                                   {.log2_x = true, .marks = {}});
  for (const char* tick : {">1Ki<", ">1Mi<", ">elements (log2 scale)<"}) EXPECT_THAT(sweep, testing::HasSubstr(tick));
}

TEST(XyChart, ParetoFrontierKeepsThePointsNoneBeats) {
  const std::vector<detail::ScatterPoint> p = {{"a", 1, 10}, {"b", 5, 5},    {"c", 10, 1},
                                               {"d", 4, 4},  {"e", NAN, 20}, {"f", 5, 5}};
  EXPECT_THAT(detail::pareto_frontier(p, true, true), testing::ElementsAre(0, 1, 5, 2));  // d is beaten by b
  EXPECT_THAT(detail::pareto_frontier(p, false, true), testing::ElementsAre(0));          // lower x: a beats all
  const std::string svg = detail::scatter_chart_svg("s", "compress_gbps (GB/s)", "ratio (ratio)", p, true, true);
  EXPECT_THAT(svg, testing::HasSubstr("class=\"frontier\""));
  for (const char* label : {">a</text>", ">b</text>", ">c</text>", ">d</text>"})
    EXPECT_THAT(svg, testing::HasSubstr(label));
  EXPECT_THAT(svg, testing::Not(testing::HasSubstr(">e</text>")));  // not finite: not drawn
  EXPECT_THAT(svg, testing::HasSubstr("d: compress_gbps (GB/s) 4.000, ratio (ratio) 4.000</title>"));
  EXPECT_THAT(svg, testing::HasSubstr("b: compress_gbps (GB/s) 5.000, ratio (ratio) 5.000 (on the Pareto frontier)"));
}

TEST(SeriesItems, HtmlReportPlotsACaseCurve) {
  RunData d = test::fixture_run();
  d.cases[0].items.push_back({"series/loss/0", {{"x", 0}, {"y", 2.0}}});
  d.cases[0].items.push_back({"series/loss/1", {{"x", 1}, {"y", 1.0}}});
  const std::string html = render(d, Format::Html);
  EXPECT_THAT(html, testing::HasSubstr("<figcaption>loss of "));
  EXPECT_THAT(html, testing::HasSubstr("class=\"line\""));
}

// A line series that several cases store (a precision sweep's loss curves and gaps) is also drawn on one chart with
// a line per case; marks the cases share stay, one that differs goes; columns and series of one case are not.
TEST(SeriesItems, HtmlReportOverlaysASeriesTheCasesShare) {
  RunData d;
  d.run.uuid = "u";
  for (const std::string p : {"fp32", "bf16", "fp8-delayed", "fp8-current", "fp8-blockwise", "mxfp8", "nvfp4"}) {
    d.cases.push_back(test::make_case("moe_train.lm", {{"precision", p}}, {{"step_ms", {1.0}}}));
    auto& items = d.cases.back().items;
    for (int i = 0; i < 3; ++i) items.push_back({"series/loss/" + std::to_string(i), {{"x", i}, {"y", 3.0 - i}}});
    items.push_back({"chart/loss", {{"caption", "training loss"}, {"marks", {{{"y", 1.5 + p.size()}, {"label", "eval"}}}}}});
    items.push_back({"series/expert_load/0", {{"x", 0}, {"y", 4}}});
    items.push_back({"chart/expert_load", {{"kind", "columns"}}});
    if (p == "fp32") continue;
    for (int i = 0; i < 3; ++i) items.push_back({"series/loss_gap/" + std::to_string(i), {{"x", i}, {"y", 0.01 * i}}});
    items.push_back({"chart/loss_gap", {{"caption", "loss gap"}, {"marks", {{{"y", 0}, {"label", "fp32"}}}}}});
  }
  const std::string html = render(d, Format::Html);
  const std::string loss = "<figcaption>training loss, one line per case (7 cases)</figcaption>";
  const std::string gap = "<figcaption>loss gap, one line per case (6 cases)</figcaption>";
  ASSERT_THAT(html, testing::HasSubstr(loss));
  ASSERT_THAT(html, testing::HasSubstr(gap));
  EXPECT_THAT(html, testing::Not(testing::HasSubstr("expert_load, one line per case")));
  const auto svg_of = [&](const std::string& caption) {
    const size_t at = html.find(caption);
    return html.substr(at, html.find("</svg>", at) - at);
  };
  EXPECT_THAT(svg_of(loss), testing::HasSubstr(">precision=nvfp4</text>"));  // the legend
  EXPECT_THAT(svg_of(loss), testing::HasSubstr("class=\"line s2\""));
  // Six colours, then the same six dashed: the seventh line (nvfp4) is not drawn as the first (fp32).
  EXPECT_THAT(svg_of(loss), testing::HasSubstr("class=\"line s0\""));
  EXPECT_THAT(svg_of(loss), testing::HasSubstr("class=\"line s0 alt\""));
  // A case keeps its colour on a chart that lacks another case (the gaps have no fp32 line).
  EXPECT_THAT(svg_of(gap), testing::HasSubstr("class=\"line s0 alt\""));
  EXPECT_THAT(svg_of(gap), testing::Not(testing::HasSubstr("class=\"line s0\"")));
  EXPECT_THAT(svg_of(gap), testing::HasSubstr("class=\"line s1\""));
  EXPECT_THAT(svg_of(loss), testing::Not(testing::HasSubstr("eval")));       // each case's own eval loss differs
  EXPECT_THAT(svg_of(gap), testing::HasSubstr("fp32"));                      // the shared zero line stays
}

TEST(ItemTables, HtmlReportFoldsAPerSiteFamilyIntoATable) {
  RunData d;
  d.run.uuid = "u";
  d.cases.push_back(test::make_case("moe_train.lm", {{"precision", "mxfp8"}}, {{"step_ms", {1.0}}}));
  d.cases.back().items.push_back({"gemm_error/block0.expert.fc1", {{"recipe", "mxfp8"}, {"fprop_rel_err", 0.0361}}});
  d.cases.back().items.push_back({"gemm_error/block1.attn.qkv", {{"recipe", "mxfp8"}, {"wgrad_rel_err", 0.0333}}});
  d.cases.back().items.push_back({"series/loss/0", {{"x", 0}, {"y", 3.0}}});
  const std::string html = render(d, Format::Html);
  const size_t at = html.find("<summary>GEMM error per site");
  ASSERT_NE(at, std::string::npos);
  const std::string table = html.substr(at, html.find("</details>", at) - at);
  EXPECT_THAT(table, testing::HasSubstr(">block0.expert.fc1<"));
  EXPECT_THAT(table, testing::HasSubstr(">block1.attn.qkv<"));
  EXPECT_THAT(table, testing::HasSubstr(">0.03610<"));
  EXPECT_THAT(table, testing::HasSubstr(">wgrad_rel_err<"));
  EXPECT_THAT(table, testing::HasSubstr("<th>gemm_error</th><th>recipe</th><th>fprop_rel_err</th>")) << "text first";
  EXPECT_THAT(table, testing::HasSubstr(">—<")) << "each site lacks the other's error";
  EXPECT_THAT(table, testing::Not(testing::HasSubstr("series")));
  RunData plain;
  plain.run.uuid = "v";
  plain.cases.push_back(test::make_case("moe_train.lm", {}, {{"step_ms", {1.0}}}));
  EXPECT_THAT(render(plain, Format::Html), testing::Not(testing::HasSubstr("GEMM error per site")));
}

// A swept numeric axis gets one line chart per metric with a line per combination of the other axes (a line
// per codec); an axis spanning 64x or more is log-log, and then the bandwidths (GB/s) are drawn against it
// too, as nccl-tests prints them; two values are no sweep.
TEST(SweepCharts, OneChartPerMetricWithALinePerMethod) {
  RunData d;
  d.run.uuid = "u";
  for (const std::string codec : {"zstd", "lz4"})
    for (int e : {1024, 4096, 16384, 65536}) {
      d.cases.push_back(test::make_case("compress", {{"codec", codec}, {"elements", e}, {"level", 1}},
                                        {{"time_ms", {e / 1000.0, e / 900.0}}, {"compress_gbps", {2.0, 2.1}}}));
      for (auto& s : d.cases.back().summaries)
        if (s.metric == "compress_gbps") s.unit = "GB/s";
    }
  const std::string html = render(d, Format::Html);
  const std::string caption =
      "<figcaption>time_ms (ms) against elements (log2 scale), a line per codec</figcaption>";
  ASSERT_THAT(html, testing::HasSubstr(caption));
  const std::string svg = html.substr(html.find(caption), html.find("</svg>", html.find(caption)) - html.find(caption));
  EXPECT_THAT(svg, testing::HasSubstr("class=\"line s0\""));
  EXPECT_THAT(svg, testing::HasSubstr("class=\"line s1\""));
  EXPECT_THAT(svg, testing::HasSubstr(">codec=zstd</text>"));  // the legend
  EXPECT_THAT(svg, testing::HasSubstr(">codec=lz4</text>"));
  EXPECT_THAT(svg, testing::HasSubstr("time_ms (ms) (log scale)"));  // 1 to 73 ms: log-log
  EXPECT_THAT(html, testing::HasSubstr(
                        "<figcaption>compress_gbps (GB/s) against elements (log2 scale), a line per codec</figcaption>"));
  EXPECT_THAT(html, testing::Not(testing::HasSubstr("codec=zstd</figcaption>")));  // no chart per codec
  EXPECT_THAT(html, testing::Not(testing::HasSubstr("against level")));
  EXPECT_THAT(html, testing::Not(testing::HasSubstr("against codec")));
}

// A Pareto frontier compares methods on one input: a sweep over two sizes gets a frontier per size, the
// largest shown and the other folded, never one frontier across sizes.
TEST(SweepCharts, AParetoFrontierPerInputSize) {
  RunData d;
  d.run.uuid = "u";
  for (int e : {65536, 1048576})
    for (const auto& [codec, ratio, gbps] : {std::tuple{"zstd", 1.4, 0.8}, {"lz4", 1.1, 2.5}, {"topk", 16.7, 0.5}}) {
      d.cases.push_back(test::make_case("compress", {{"codec", codec}, {"elements", e}},
                                        {{"ratio", {ratio, ratio}}, {"compress_gbps", {gbps * e / 1e6, gbps * e / 1e6}}}));
      d.cases.back().primary_metric = "ratio";
      for (auto& s : d.cases.back().summaries) s.better = Better::Higher;
    }
  const std::string html = render(d, Format::Html);
  EXPECT_THAT(html, testing::HasSubstr("against compress_gbps (GB/s) at elements=1048576 (medians; the Pareto frontier joined)"));
  EXPECT_THAT(html, testing::HasSubstr("<summary>1 more Pareto frontiers, one per elements</summary>"));
  EXPECT_THAT(html, testing::HasSubstr("against compress_gbps (GB/s) at elements=65536 (medians"));
  EXPECT_LT(html.find("at elements=1048576"), html.find("at elements=65536"));
}

// Exposed communication is drawn against chunks beside the primary metric, both with the overlap=none case
// of the same other axes as a dashed reference line; a case with other axes is no reference.
TEST(SweepCharts, ExposedCommunicationAgainstChunksWithTheUnoverlappedCase) {
  RunData d;
  d.run.uuid = "u";
  auto add = [&](const std::string& overlap, int chunks, int tokens, double step, double exposed) {
    d.cases.push_back(test::make_case("moe_train.layer", {{"overlap", overlap}, {"chunks", chunks}, {"tokens", tokens}},
                                      {{"step_ms", {step, step}}, {"exposed_comm_ms", {exposed, exposed}}}));
    d.cases.back().primary_metric = "step_ms";
    for (auto& s : d.cases.back().summaries) s.unit = "ms";
  };
  add("none", 1, 64, 900, 149.5);
  add("none", 1, 32, 451.25, 77.25);  // other tokens: not the reference of the tokens=64 line
  for (const auto& [chunks, exposed] : std::vector<std::pair<int, double>>{{1, 45.5}, {2, 37.5}, {4, 16.5}, {8, 24.5}})
    add("chunked", chunks, 64, 600, exposed);
  const std::string html = render(d, Format::Html);
  // The chart under `caption` (empty when there is none).
  auto chart = [&](const std::string& caption) {
    const size_t at = html.find(caption);
    return at == std::string::npos ? std::string() : html.substr(at, html.find("</svg>", at) - at);
  };
  const std::string svg =
      chart("exposed_comm_ms (ms) against chunks, overlap=chunked,tokens=64; dashed: overlap=none</figcaption>");
  ASSERT_FALSE(svg.empty()) << html;
  EXPECT_THAT(svg, testing::HasSubstr("overlap=none"));
  EXPECT_THAT(svg, testing::HasSubstr("149.5"));
  EXPECT_THAT(svg, testing::Not(testing::HasSubstr("77.25")));
  // The primary metric against the same axis gets the same reference.
  const std::string step_svg =
      chart("<figcaption>step_ms (ms) against chunks, overlap=chunked,tokens=64; dashed: overlap=none</figcaption>");
  ASSERT_FALSE(step_svg.empty()) << html;
  EXPECT_THAT(step_svg, testing::HasSubstr("overlap=none 900"));
  EXPECT_THAT(step_svg, testing::Not(testing::HasSubstr("451.25")));
  // overlap=none ignores chunks: its cases at three chunk counts draw no line against chunks.
  for (const int chunks : {2, 4}) add("none", chunks, 64, 901, 150);
  const std::string again = render(d, Format::Html);
  EXPECT_THAT(again, testing::Not(testing::HasSubstr("against chunks, overlap=none")));
  EXPECT_THAT(again, testing::HasSubstr("against chunks, overlap=chunked,tokens=64; dashed: overlap=none"));
}

// A folding sweep draws the bytes each mapping sends between nodes against ep, a line per etp, beside the step
// time; without a reference axis there is no dashed line.
TEST(SweepCharts, CrossNodeBytesAgainstEpALinePerEtp) {
  RunData d;
  d.run.uuid = "u";
  for (int etp : {1, 2})
    for (int ep : {1, 2, 4}) {
      const double bytes = 1000.0 * ep / etp, step = 40.0 + ep;
      d.cases.push_back(test::make_case("moe_train.block", {{"etp", etp}, {"ep", ep}},
                                        {{"step_ms", {step, step}}, {"cross_node_bytes", {bytes, bytes}}}));
      d.cases.back().primary_metric = "step_ms";
      for (auto& s : d.cases.back().summaries) s.unit = s.metric == "step_ms" ? "ms" : "bytes", s.better = Better::Lower;
    }
  const std::string html = render(d, Format::Html);
  EXPECT_THAT(html, testing::HasSubstr("<figcaption>cross_node_bytes (bytes) against ep, a line per etp</figcaption>"));
  EXPECT_THAT(html, testing::HasSubstr("<figcaption>step_ms (ms) against ep, a line per etp</figcaption>"));
  EXPECT_THAT(html, testing::Not(testing::HasSubstr("dashed:")));
}

// The step's breakdown names the parts its cases record: the folded block's gradient reductions, no optimizer.
TEST(CaseCharts, StepBreakdownNamesOnlyThePartsTheCasesRecord) {
  RunData d;
  d.run.uuid = "u";
  for (int ep : {2, 4}) {
    d.cases.push_back(test::make_case("moe_train.block", {{"ep", ep}},
                                      {{"step_ms", {30, 30}}, {"forward_ms", {10, 10}}, {"backward_ms", {15, 15}},
                                       {"grad_sync_ms", {4, 4}}}));
    d.cases.back().primary_metric = "step_ms";
    for (auto& s : d.cases.back().summaries) s.unit = "ms";
  }
  const std::string html = render(d, Format::Html);
  const size_t at = html.find("step_ms split into its parts");
  ASSERT_NE(at, std::string::npos) << html;
  const std::string svg = html.substr(at, html.find("</svg>", at) - at);
  EXPECT_THAT(svg, testing::HasSubstr(">grad_sync_ms<"));
  EXPECT_THAT(svg, testing::HasSubstr(">backward_ms<"));
  EXPECT_THAT(svg, testing::Not(testing::HasSubstr("optimizer_ms")));
}

// A workload's charts come before its full tables: a Pareto scatter when cases record a trade-off, a
// stacked bar per time breakdown, and bar charts on a log scale when the medians span 10x or more.
TEST(CaseCharts, TradeOffBreakdownAndLogScaleBeforeTheTables) {
  RunData d;
  d.run.uuid = "u";
  const std::vector<std::tuple<std::string, double, double>> codecs = {
      {"zstd", 1.4, 0.8}, {"lz4", 1.1, 2.5}, {"topk", 16.7, 0.5}, {"none", 1.0, 9.0}, {"slow", 1.05, 0.1}};
  for (const auto& [codec, ratio, gbps] : codecs) {
    d.cases.push_back(test::make_case("compress", {{"codec", codec}},
                                      {{"ratio", {ratio, ratio}}, {"compress_gbps", {gbps, gbps * 1.01}}}));
    d.cases.back().items.push_back({"group", {{"name", codec == "topk" ? "lossy" : "lossless"}}});
  }
  d.cases.push_back(test::make_case("moe_train", {{"experts", 8}},
                                    {{"step_ms", {10.0, 10.0}},
                                     {"forward_ms", {3.0, 3.0}},
                                     {"backward_ms", {5.0, 5.0}},
                                     {"optimizer_ms", {1.0, 1.0}}}));
  for (auto& c : d.cases)
    for (auto& s : c.summaries) {
      const bool time = s.metric.ends_with("_ms");
      s.unit = time ? "ms" : s.metric == "ratio" ? "ratio" : "GB/s";
      s.better = time ? Better::Lower : Better::Higher;
    }
  const std::string html = render(d, Format::Html);
  EXPECT_THAT(html, testing::HasSubstr("<figcaption>compression ratio against compression throughput: ratio"));
  EXPECT_THAT(html, testing::HasSubstr("class=\"frontier\""));
  // none (fastest), lz4, zstd and topk (densest) are on the frontier; slow is beaten by lz4 on both.
  EXPECT_THAT(html, testing::HasSubstr("codec=lz4: compress_gbps"));
  const size_t slow = html.find("codec=slow: compress_gbps");
  ASSERT_NE(slow, std::string::npos);
  EXPECT_THAT(html.substr(slow, html.find("</title>", slow) - slow), testing::Not(testing::HasSubstr("frontier")));
  EXPECT_THAT(html, testing::HasSubstr("codec=none: compress_gbps (GB/s) 9.045, ratio (ratio) 1.000 (on the Pareto"));
  EXPECT_THAT(html, testing::HasSubstr("ratio (ratio), higher is better: median per case, 95% CI, log scale"));
  // The families apart: the lossless codecs' bars, then topk's under "lossy".
  const size_t ratio_chart = html.find("<title>compress ratio</title>");
  ASSERT_NE(ratio_chart, std::string::npos);
  const std::string svg = html.substr(ratio_chart, html.find("</svg>", ratio_chart) - ratio_chart);
  EXPECT_LT(svg.find(">lossless</text>"), svg.find(">codec=zstd</text>"));
  EXPECT_LT(svg.find(">codec=slow</text>"), svg.find(">lossy</text>"));
  EXPECT_LT(svg.find(">lossy</text>"), svg.find(">codec=topk</text>"));
  EXPECT_THAT(html, testing::HasSubstr("<figcaption>step_ms split into its parts (ms, medians per case)"));
  EXPECT_THAT(html, testing::HasSubstr("moe_train: optimizer_ms 1.000 ms"));
  EXPECT_THAT(html, testing::HasSubstr(">other</text>"));  // the legend names the remainder (1 ms of 10)
  EXPECT_THAT(html, testing::HasSubstr("moe_train: other 1.000 ms"));
  const size_t moe = html.find("<h2>moe_train</h2>");
  ASSERT_NE(moe, std::string::npos);
  EXPECT_LT(html.find("step_ms split"), html.find("<h3>Cases</h3>", moe));
  EXPECT_LT(html.find("<figure>"), html.find("<h3>Cases</h3>"));
}

// Bars are labelled by what differs between the cases, never cut so that two read alike.
TEST(ChartLabels, NameWhatDiffersAndStayDistinct) {
  EXPECT_EQ(detail::distinct_labels({"moe_offload/experts=8,layers=4,policy=lru,seq_len=32",
                                     "moe_offload/experts=8,layers=4,policy=predictive,seq_len=32",
                                     "moe_offload/experts=8,layers=4,policy=belady,seq_len=32"}),
            (std::vector<std::string>{"policy=lru", "policy=predictive", "policy=belady"}));
  EXPECT_EQ(detail::distinct_labels({"compress/codec=zstd,elements=1024", "compress/codec=lz4,elements=2048"}),
            (std::vector<std::string>{"codec=zstd,elements=1024", "codec=lz4,elements=2048"}));
  EXPECT_EQ(detail::distinct_labels({"toolbench", "toolbench/agent=heuristic"}),
            (std::vector<std::string>{"toolbench", "toolbench/agent=heuristic"}));
  // Long labels keep both ends: two that differ only at the end stay apart.
  const std::string common(150, 'a');
  const std::string svg =
      detail::bar_chart_svg("t", "ms", {{common + "=1", 1, 1, 1, ""}, {common + "=2", 2, 2, 2, ""}});
  EXPECT_NE(svg.find("…" + std::string(45, 'a') + "=1</text>"), std::string::npos) << svg;
  EXPECT_NE(svg.find("…" + std::string(45, 'a') + "=2</text>"), std::string::npos) << svg;
  // Two that differ only in the middle are drawn whole rather than alike.
  const std::string left(60, 'l'), right(60, 'r');
  const std::string middle =
      detail::bar_chart_svg("t", "ms", {{left + "1" + right, 1, 1, 1, ""}, {left + "2" + right, 2, 2, 2, ""}});
  EXPECT_NE(middle.find(">" + left + "1" + right + "</text>"), std::string::npos) << middle;
  EXPECT_NE(middle.find(">" + left + "2" + right + "</text>"), std::string::npos) << middle;
}

// A history chart's axes: 3-6 y ticks spanning the data (a constant non-negative series gets no negative
// tick), the unit above them, and the runs' short shas on x (the first, the last and at most 8 in all).
TEST(HistoryChart, LabelsRunsOnXAndNiceTicksOnY) {
  std::vector<detail::HistoryMark> marks;
  for (int i = 0; i < 20; ++i) marks.push_back({6083, NAN, NAN, "run", false, "sha" + std::to_string(100 + i)});
  const std::string svg = detail::history_chart_svg("t", "ms", marks, {}, {});
  size_t y_labels = 0;
  for (size_t at = svg.find("class=\"lbl\""); at != std::string::npos; at = svg.find("class=\"lbl\"", at + 1)) ++y_labels;
  EXPECT_GE(y_labels, 4u) << svg;  // 3 ticks at least, and the unit
  EXPECT_LE(y_labels, 7u) << svg;
  EXPECT_EQ(svg.find(">-"), std::string::npos) << "no negative tick for a positive series: " << svg;
  EXPECT_NE(svg.find(">ms</text>"), std::string::npos);
  EXPECT_NE(svg.find(">sha100</text>"), std::string::npos);
  EXPECT_NE(svg.find(">sha119</text>"), std::string::npos);
  size_t x_labels = 0;
  for (size_t at = svg.find(">sha"); at != std::string::npos; at = svg.find(">sha", at + 1)) ++x_labels;
  EXPECT_LE(x_labels, 8u);
  EXPECT_GE(x_labels, 5u);
}

}  // namespace
}  // namespace mlsb::reports
