#pragma once
// Inline SVG charts of cases: a horizontal bar chart (one bar per case: its median with an error bar for
// its 95% CI), a stacked bar chart (a time split into its parts) and a history chart (a metric over runs).
// The x-y charts (lines, columns, scatter) are in xy_chart.hpp.
#include <cmath>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace mlsb::reports::detail {

struct Bar {
  std::string label;  ///< plain text; escaped by the chart
  double value = 0, lo = 0, hi = 0;
  std::string group;  ///< the family the case belongs to ("lossless"); "" = none
};

/// An <svg> element (role="img") titled `title`; the axis spans 0 and every bar's value and CI, or, with
/// `log_scale` and every value positive, the whole decades around them on a log10 scale (for values
/// spanning 10x or more: compression ratios of 1.1 and 16). Non-finite values are drawn as empty rows. The
/// label column is as wide as the longest label (up to 96 characters; a longer one keeps its start and end
/// around an ellipsis, unless two labels would then read alike: then all are whole); each bar's hover
/// title holds its full label. Where a bar's group differs from the
/// bar before it, a row naming the group (class "grp") comes first: give the bars sorted by group.
std::string bar_chart_svg(const std::string& title, const std::string& unit, const std::vector<Bar>& bars,
                          bool log_scale = false);

struct StackedBar {
  std::string label;          ///< plain text; escaped by the chart
  std::vector<double> parts;  ///< one value per part name, in its unit; non-positive parts are not drawn
};

/// An <svg> chart of one horizontal bar per case split into its parts (forward, backward, optimizer),
/// with a legend of `part_names`, each part's value in its hover title and the total right of the bar.
std::string stacked_bar_chart_svg(const std::string& title, const std::string& unit,
                                  const std::vector<std::string>& part_names, const std::vector<StackedBar>& bars);

/// Chart labels for case names "workload/a=1,b=x": the workload and every axis=value that all names
/// share are left out, so the labels name what differs ("policy=lru", "policy=belady"); a name that
/// shares everything keeps its full form. Names without '/' are kept as they are.
std::vector<std::string> distinct_labels(const std::vector<std::string>& names);

/// One run of a history chart.
struct HistoryMark {
  double y = 0, lo = NAN, hi = NAN;  ///< median and its CI (NaN: none drawn)
  std::string title;                 ///< hover text: run, git sha, date, value
  bool throttled = false;            ///< drawn hollow
  std::string label;                 ///< the x axis's label of the run: a short git sha, else its date
};
/// A level of the fit: runs [begin, end) at `value`.
struct HistoryLevel {
  size_t begin = 0, end = 0;
  double value = 0;
};
/// A step marker before run `at`: class "step regression" when `regression`, else "step".
struct HistoryStepMark {
  size_t at = 0;
  bool regression = false;
  std::string title;
};
/// An <svg> line chart of a metric over runs (x = run index): the medians joined by a line, each a dot
/// with its hover title and CI whisker, the fitted levels as flat segments, and a dashed vertical marker
/// at each step (class "step", plus "regression" for a standing regression). The y axis has 3-6 nice ticks
/// (nice_ticks) spanning every median and CI, never below 0 when none is negative, the unit above it; the x
/// axis labels at most 8 runs (the first, the last and evenly between) with their HistoryMark::label.
std::string history_chart_svg(const std::string& title, const std::string& unit, const std::vector<HistoryMark>& marks,
                              const std::vector<HistoryLevel>& levels, const std::vector<HistoryStepMark>& steps);

}  // namespace mlsb::reports::detail
