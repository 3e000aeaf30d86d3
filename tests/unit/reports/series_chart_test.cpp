// Series items ("series/<name>/<i>") become line charts in the HTML report; malformed items are skipped.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

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
             {"series/bad", {{"x", 0}, {"y", 1}}},            // no index: skipped
             {"task/u/0", {{"x", 0}, {"y", 1}}}};
  const auto s = detail::collect_series(c);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_THAT(s.at("loss"), testing::ElementsAre(std::pair(0.0, 5.5), std::pair(1.0, 4.0)));
  EXPECT_EQ(s.at("lr").size(), 1u);
}

TEST(SeriesItems, LineChartDrawsOnePathAndTheRanges) {
  const std::string svg = detail::line_chart_svg("loss <curve>", "step", "loss", {{0, 5.5}, {1, 4.0}, {2, NAN}, {3, 3.0}});
  EXPECT_THAT(svg, testing::HasSubstr("<path class=\"line\" d=\"M70.0 10.0L"));
  EXPECT_EQ(std::count(svg.begin(), svg.end(), 'L'), 2) << "the non-finite point is left out";
  EXPECT_THAT(svg, testing::HasSubstr("loss &lt;curve&gt;"));
  EXPECT_THAT(svg, testing::HasSubstr(">5.500<"));
  EXPECT_THAT(detail::line_chart_svg("empty", "x", "y", {}), testing::Not(testing::HasSubstr("class=\"line\"")));
}

TEST(SeriesItems, HtmlReportPlotsACaseCurve) {
  RunData d = test::fixture_run();
  d.cases[0].items.push_back({"series/loss/0", {{"x", 0}, {"y", 2.0}}});
  d.cases[0].items.push_back({"series/loss/1", {{"x", 1}, {"y", 1.0}}});
  const std::string html = render(d, Format::Html);
  EXPECT_THAT(html, testing::HasSubstr("<figcaption>loss of "));
  EXPECT_THAT(html, testing::HasSubstr("class=\"line\""));
}

// A swept numeric axis gets a line chart of the primary metric per combination of the other axes; an axis
// spanning 64x or more is on a log2 scale; two values are no sweep.
TEST(SweepCharts, OnePerSweptAxisAndSeries) {
  RunData d;
  d.run.uuid = "u";
  for (const std::string codec : {"zstd", "lz4"})
    for (int e : {1024, 4096, 16384, 65536})
      d.cases.push_back(test::make_case("compress", {{"codec", codec}, {"elements", e}, {"level", 1}},
                                        {{"time_ms", {e / 1000.0, e / 900.0}}}));
  const std::string html = render(d, Format::Html);
  EXPECT_THAT(html, testing::HasSubstr("<figcaption>time_ms (ms) against elements (log2 scale), codec=zstd</figcaption>"));
  EXPECT_THAT(html, testing::HasSubstr("<figcaption>time_ms (ms) against elements (log2 scale), codec=lz4</figcaption>"));
  EXPECT_THAT(html, testing::Not(testing::HasSubstr("against level")));
  EXPECT_THAT(html, testing::Not(testing::HasSubstr("against codec")));
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
  const std::string svg = detail::bar_chart_svg("t", "ms", {{common + "=1", 1, 1, 1}, {common + "=2", 2, 2, 2}});
  EXPECT_NE(svg.find("…" + std::string(45, 'a') + "=1</text>"), std::string::npos) << svg;
  EXPECT_NE(svg.find("…" + std::string(45, 'a') + "=2</text>"), std::string::npos) << svg;
}

}  // namespace
}  // namespace mlsb::reports
