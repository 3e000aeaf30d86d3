#pragma once
// Inline SVG charts: a horizontal bar chart (one bar per case: its median with an error bar for its
// 95% CI) and a line chart (one series of points, e.g. a loss curve).
#include <string>
#include <utility>
#include <vector>

namespace mlsb::reports::detail {

struct Bar {
  std::string label;  ///< plain text; escaped by the chart
  double value = 0, lo = 0, hi = 0;
};

/// An <svg> element (role="img") titled `title`; the axis spans 0 and every bar's value and CI.
/// Non-finite values are drawn as empty rows.
std::string bar_chart_svg(const std::string& title, const std::string& unit, const std::vector<Bar>& bars);

/// An <svg> line chart (role="img") of `points` (x, y) in the given order, with the axes' ranges
/// labelled; non-finite points are left out. Empty points give an empty plot.
std::string line_chart_svg(const std::string& title, const std::string& x_label, const std::string& y_label,
                           const std::vector<std::pair<double, double>>& points);

}  // namespace mlsb::reports::detail
