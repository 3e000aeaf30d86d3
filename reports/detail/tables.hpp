#pragma once
// The report tables as plain-text cells, built once and written as HTML or Markdown.
#include <string>
#include <string_view>
#include <vector>

#include "reports/detail/report_text.hpp"
#include "reports/detail/toolbench_items.hpp"

namespace mlsb::reports::detail {

struct Table {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> row_class;  ///< per row, for HTML styling ("" when none)
  std::vector<bool> numeric;           ///< per column: right-aligned, never wrapped
  std::vector<bool> text;              ///< per column: long free text (HTML: capped width, wraps anywhere)
};

/// One row per case: display name, placement, status (with the throttled mark and reason: status_text),
/// primary metric median, CI, n, noise (CI and noise "—" when n < 2), items. Row class "st-<status>", plus
/// " throttled" for a throttled case.
Table cases_table(const WorkloadGroup& g);
/// One row per ok case, one column per metric: "median [ci_lo, ci_hi]" ("median —" when n < 2).
/// No rows when the group has no metrics.
Table metrics_table(const WorkloadGroup& g);
/// The items "<family>/<row>" of one case whose details are flat JSON objects (a workload's per-part numbers:
/// moe_train's "gemm_error/<block>.<site>"), as a table: the row's name, then a column per key in the order first
/// seen, text columns first; numbers as fmt_num, strings as they are, a missing key "—". No rows when the case has
/// no such item.
Table item_family_table(const CaseRecord& c, std::string_view family);
/// Toolbench task tables: per category, per expected tool, and the failing tasks.
Table task_group_table(const std::string& first_column, const std::vector<TaskGroup>& groups, const TaskGroup& all);
Table failing_tasks_table(const std::vector<FailedTask>& failing);
/// Agents side by side: one row per category (every category of any column, then "all"), one column
/// per agent case: "pass rate / AST accuracy (task trials)"; "" where a case has no task of the category.
Table agents_side_by_side_table(const std::vector<AgentColumn>& columns);

std::string html_table(const Table& t, const std::string& css_class);
std::string md_table(const Table& t);

}  // namespace mlsb::reports::detail
