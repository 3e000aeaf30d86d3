#pragma once
// Helpers shared by the renderers: number and time formatting, escaping, grouping cases by workload.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "reports/model.hpp"

namespace mlsb::reports::detail {

/// `v` with `sig` significant digits, plain notation for 1e-3 <= |v| < 1e6, else %g style;
/// "n/a" for NaN/inf.
std::string fmt_num(double v, int sig = 4);
/// "metric (unit)", or the metric alone when the unit is empty: table headers and chart captions.
std::string metric_with_unit(const std::string& metric, const std::string& unit);
/// "[lo, hi]" with fmt_num.
std::string fmt_interval(double lo, double hi);
/// `v` as a JSON number; null for NaN/inf, which JSON cannot hold.
nlohmann::ordered_json json_number(double v);
/// Shown instead of a noise estimate (CI, relative stddev, p-value) when n < 2: an em dash (UTF-8).
inline constexpr const char* kNoEstimate = "\xE2\x80\x94";
/// A summary's 95% CI as fmt_interval, or "—" when n < 2 (a single sample has no noise estimate).
std::string fmt_ci(const Summary& s);
/// A summary's relative stddev as a percentage ("1.23%"), or "—" when n < 2.
std::string fmt_rel_stddev(const Summary& s);
/// Unix seconds as ISO 8601 UTC ("2026-01-02T03:04:05Z"); "" for 0.
std::string iso_time(double unix_s);
/// A relative change as a signed percentage with 3 significant digits ("+12.3%", "-5.08%"); "n/a" when not
/// finite.
std::string fmt_signed_percent(double change);
/// Share as a percentage with one decimal ("87.5%"); "n/a" when total is 0.
std::string fmt_percent(int part, int total);

std::string html_escape(std::string_view s);
/// html_escape, with a line-break opportunity (<wbr>) after each ',' and '/': a case name
/// ("workload/a=1,b=2") wraps between its params before it breaks inside one.
std::string html_breakable(std::string_view s);
/// Escapes a GFM table cell: `|`, `\`, `<`, `>`, `&`, backticks; newlines become spaces.
std::string md_escape(std::string_view s);

/// "failed: <reason>" style status text; just the status when there is no reason. A throttled case
/// has its throttle_text after the status: "ok, throttled (sw_power_cap): <reason>".
std::string status_text(const CaseRecord& c);
/// "throttled (sw_power_cap, hw_slowdown)" when the case's GPU throttled (CaseRecord::throttled, with the
/// reasons of its gpu record; "throttled" alone when it has none), else "".
std::string throttle_text(const CaseRecord& c);
/// The summary of `metric`, or nullptr.
const SummaryRow* find_summary(const CaseRecord& c, std::string_view metric);
/// A tool call {"name","arguments"} as "name({...})".
std::string call_text(const nlohmann::json& call);

/// Cases grouped by workload, workloads in order of first appearance, cases in run order.
struct WorkloadGroup {
  std::string workload;
  std::vector<const CaseRecord*> cases;
  std::vector<std::string> names;  ///< per case: its display name in the run (case_display_names)
  /// (metric, unit) in order of first appearance among the cases' summaries.
  std::vector<std::pair<std::string, std::string>> metrics;
};
std::vector<WorkloadGroup> group_by_workload(const RunData& run);
/// "3 cases: 1 ok, 1 failed, 1 skipped" (statuses in order of first appearance).
std::string status_counts(const WorkloadGroup& g);
/// A sentence saying what "throttled" means when some case of the group is, else "".
std::string throttle_note(const WorkloadGroup& g);

/// One metric of one case, as the CI trend formats (bmf, gab) report it.
struct TrendPoint {
  const CaseRecord* c;
  std::string case_name;  ///< the case's display name in the run (case_display_names)
  const SummaryRow* summary;
};
/// What the CI trend formats report, in run order, then the case's summary order: each summary of an ok case
/// that has samples of its metric and a finite median, p05 and p95.
std::vector<TrendPoint> trend_points(const RunData& run);

/// Environment JSON flattened to ("a.b.c", scalar text) rows; arrays of scalars joined by ", ".
std::vector<std::pair<std::string, std::string>> flatten_env(const nlohmann::json& env);

/// Run metadata as (field, value) rows in display order.
std::vector<std::pair<std::string, std::string>> run_fields(const RunRecord& run);

}  // namespace mlsb::reports::detail
