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

}  // namespace
}  // namespace mlsb::reports
