#pragma once
// The charts of a workload's cases in the HTML report, each a <figure> with its caption: a line per swept
// axis, a Pareto scatter per trade-off, a stacked bar per time breakdown, and a bar chart per metric that
// differs between cases.
#include <string>

#include "reports/detail/report_text.hpp"

namespace mlsb::reports::detail {

/// Sweeps: for each numeric axis with 3 or more values among the ok cases, one line chart of the primary
/// metric against it per combination of the other axes that vary (step time against experts, GB/s
/// against size, hit rate against cache fraction). An axis spanning 64x or more is on a log2 scale.
/// kSweptMetrics adds metrics drawn against an axis the same way (exposed_comm_ms against chunks), with
/// the case at a reference value of another axis (overlap=none) as a dashed line when the run has one, on
/// their chart and on the primary metric's against that axis.
void sweep_charts(std::string& out, const WorkloadGroup& g);

/// Trade-offs (kTradeOffs: compression ratio against compression throughput): with 3 or more ok cases
/// recording both metrics, a scatter of them with the Pareto frontier, each point labelled by what
/// differs between the cases.
void tradeoff_charts(std::string& out, const WorkloadGroup& g);

/// Breakdowns (kBreakdowns: step_ms into forward_ms, backward_ms, optimizer_ms): a stacked bar per ok
/// case that records the total and two or more parts (medians; the rest of the total, when over 1% of
/// it, as "other").
void breakdown_charts(std::string& out, const WorkloadGroup& g);

/// One bar chart per metric that at least two ok cases report and that differs between them (a single
/// bar, or bars all of one value, compare nothing; the metrics table shows every value), on a log scale
/// when the medians are positive and span 10x or more. Bars are labelled by what differs between the
/// cases (distinct_labels) and kept together by family (a case's item "group" {"name": ...}, e.g.
/// compress's lossless and lossy codecs), each family under its name. The primary metric's chart is
/// shown; the others are folded into one <details> element ("N more bar charts"), so that the page stays
/// short to read.
void metric_charts(std::string& out, const WorkloadGroup& g);

}  // namespace mlsb::reports::detail
