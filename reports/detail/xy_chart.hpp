#pragma once
// Inline SVG x-y charts with labelled ticks: a line (a loss curve, a sweep), columns (a load per expert)
// and a scatter with its Pareto frontier (compression ratio against compression throughput).
#include <string>
#include <utility>
#include <vector>

namespace mlsb::reports::detail {

/// A dashed horizontal reference line across the plot (an eval loss, a balanced load), labelled.
struct RefLine {
  double y = 0;
  std::string label;
};

struct XyOptions {
  bool columns = false;        ///< one column per point from 0 to y, instead of a line
  bool log2_x = false;         ///< x on a log2 scale (x > 0; other points left out), ticks at powers of 2
  /// y on a log10 scale, ticks at powers of 10, when every y is > 0 and they span 10x or more (else linear:
  /// a narrower span reads better on a linear axis). With log2_x: a log-log chart of a size sweep.
  bool log10_y = false;
  std::vector<RefLine> marks;  ///< drawn and labelled off the data; the y axis spans them too
};

/// One line of a line chart, named in the chart's legend by `label` ("" for a chart of one line: no legend).
struct XySeries {
  std::string label;
  std::vector<std::pair<double, double>> points;
  int slot = -1;  ///< its colour and dash (six colours, then the six dashed): -1 its position among the series; a
                  ///< fixed slot keeps one case's colour across charts that do not all draw every case
};

/// A tick's label: whole numbers (steps, experts, sizes) as integers, powers of two from 1024 up with the
/// binary suffixes the axes accept (64Ki, 1Mi), other values in their shortest form (0.3, 2.5e-05).
std::string tick_label(double v);

/// "Nice" tick values (steps of 1, 2 or 5 times a power of ten) covering [lo, hi] (the first at or below
/// lo, the last at or above hi), about `max_ticks` of them; with `integers`, steps of at least 1 (for
/// steps, experts). A single value (or values apart by rounding only) is widened by 10% of it (1 at 0)
/// on each side; never fewer than 2 ticks nor more than about 100 (non-finite input gives {0, 1}).
std::vector<double> nice_ticks(double lo, double hi, int max_ticks = 6, bool integers = false);

/// An <svg> chart (class "chart", role="img") of `points` (x, y) in the given order, titled `title`,
/// with 3–6 labelled ticks on each axis, the axes named `x_label` and `y_label` (give the unit in the
/// label: "loss (nats/byte)"), and `options`' reference lines. Non-finite points are left out; no points
/// gives an empty plot. A point whose x is below the one before it starts a new line: a series stored once per
/// sample (a loss curve of each repetition) is drawn as one line per repetition, not joined end to start.
std::string line_chart_svg(const std::string& title, const std::string& x_label, const std::string& y_label,
                           const std::vector<std::pair<double, double>>& points, const XyOptions& options = {});

/// The same with several lines on one pair of axes (a method each: one line per codec over a size sweep),
/// each in its own colour (classes "line s0".."line s5", repeating) and named in a legend under the chart.
/// Reference-line labels sit where no line passes (right or left end, above or below).
std::string line_chart_svg(const std::string& title, const std::string& x_label, const std::string& y_label,
                           const std::vector<XySeries>& series, const XyOptions& options = {});

struct ScatterPoint {
  std::string label;  ///< plain text, printed beside the point (class "lbl") and in its hover title
  double x = 0, y = 0;
};

/// Indices of the points on the Pareto frontier (no other point is at least as good on both axes and
/// better on one), ordered by x. `x_higher`/`y_higher`: whether higher is better on that axis.
/// Non-finite points are never on it.
std::vector<size_t> pareto_frontier(const std::vector<ScatterPoint>& points, bool x_higher, bool y_higher);

/// An <svg> scatter chart of `points`, each labelled, with the Pareto frontier joined by a line (class
/// "frontier") and its points filled (class "pt front"); the others are hollow (class "pt"). y is on a
/// log10 scale when positive and spanning 10x or more; a label moves above or below its point to miss
/// the labels drawn before it.
std::string scatter_chart_svg(const std::string& title, const std::string& x_label, const std::string& y_label,
                              const std::vector<ScatterPoint>& points, bool x_higher, bool y_higher);

}  // namespace mlsb::reports::detail
