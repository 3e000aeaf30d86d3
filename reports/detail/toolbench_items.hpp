#pragma once
// Aggregates the toolbench workload's per-task items ("task/<uuid>/<trial>") for the reports:
// per category and per expected tool, AST accuracy (tool_match && param_match) and pass rate,
// plus the failing tasks.
#include <optional>
#include <string>
#include <vector>

#include "reports/detail/report_text.hpp"
#include "reports/model.hpp"

namespace mlsb::reports::detail {

struct TaskGroup {
  std::string name;
  int tasks = 0;     ///< task trials
  int ast_ok = 0;    ///< trials with tool_match && param_match
  int passed = 0;    ///< trials with pass
  double latency_ms = 0;  ///< mean latency of the trials
};

struct FailedTask {
  std::string uuid, category, query, expected, actual, reason;  ///< calls as "name({args})"
  int trial = 0;
};

struct TaskSummary {
  TaskGroup all;
  std::vector<TaskGroup> by_category, by_tool;  ///< sorted by name
  std::vector<FailedTask> failing;              ///< in item order
  int other_items = 0;                          ///< items that are not task outcomes
};

/// True when `key` names a toolbench task item ("task/<uuid>/<trial>").
bool is_task_item(const std::string& key);
/// nullopt when the case has no task items.
std::optional<TaskSummary> summarize_tasks(const CaseRecord& c);

/// One toolbench case of a run, for the side-by-side view of its agents.
struct AgentColumn {
  std::string name;  ///< the case's display name, with " (ceiling)" for the oracle agent and " (floor)"
                     ///< for the heuristic one
  TaskSummary tasks;
};
/// The cases of `g` that have task items, in run order.
std::vector<AgentColumn> agent_columns(const WorkloadGroup& g);

}  // namespace mlsb::reports::detail
