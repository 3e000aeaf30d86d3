#pragma once
// Inline SVG horizontal bar chart: one bar per case (its median) with an error bar (its 95% CI).
#include <string>
#include <vector>

namespace mlsb::reports::detail {

struct Bar {
  std::string label;  ///< plain text; escaped by the chart
  double value = 0, lo = 0, hi = 0;
};

/// An <svg> element (role="img") titled `title`; the axis spans 0 and every bar's value and CI.
/// Non-finite values are drawn as empty rows.
std::string bar_chart_svg(const std::string& title, const std::string& unit, const std::vector<Bar>& bars);

}  // namespace mlsb::reports::detail
