#pragma once
// Series a workload stores as items keyed "series/<name>/<index>" with {"x": number, "y": number} (a
// training loss curve, a load per expert), and how each is drawn: an optional item "chart/<name>" with
// {"caption", "x_label", "y_label" (short, with the unit), "kind": "line" | "columns",
// "marks": [{"y", "label"}]}.
// Collected per case for the reports' charts.
#include <string>
#include <utility>
#include <vector>

#include "reports/detail/xy_chart.hpp"
#include "reports/model.hpp"

namespace mlsb::reports::detail {

struct SeriesChart {
  std::string name;
  std::vector<std::pair<double, double>> points;  ///< in item order
  std::string x_label = "step", y_label;          ///< y_label defaults to the series' name
  std::string caption;                            ///< what the series is; defaults to y_label
  XyOptions options;                              ///< columns and reference lines from "chart/<name>"
};

/// The case's series ordered by name; items with a non-numeric x or y are skipped, and so are fields of a
/// "chart/<name>" item of the wrong type.
std::vector<SeriesChart> collect_series(const CaseRecord& c);

}  // namespace mlsb::reports::detail
