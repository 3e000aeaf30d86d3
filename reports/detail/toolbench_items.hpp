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
  int tasks = 0;      ///< distinct tasks (uuids)
  int trials = 0;     ///< task trials: every trial of every sample (repetition)
  int ast_ok = 0;     ///< trials with tool_match && param_match
  int passed = 0;     ///< trials with pass
  int called = 0;     ///< trials that made at least one tool call
  double latency_ms = 0;  ///< mean latency of the trials that made a call (0 when none did)
};

/// One task that failed in some of its trials, folded over its trials and samples.
struct FailedTask {
  std::string uuid, category, query, expected;  ///< calls as "name({args})"
  std::string actual, reason;                   ///< of its first failing trial
  int failed = 0, trials = 0;                   ///< failing trials of all its trials
  std::vector<std::string> where;               ///< "s1/t0": sample (repetition) and trial of each failure
};

struct TaskSummary {
  TaskGroup all;
  std::vector<TaskGroup> by_category, by_tool;  ///< sorted by name
  std::vector<FailedTask> failing;              ///< one per task, in the order of first failure
  int failing_trials = 0;                       ///< the failing trials of all tasks
  int other_items = 0;                          ///< items that are not task outcomes
};

/// "floor" for the heuristic agent, "ceiling" for the oracle, "" for any other case: reference points
/// whose failures a report folds.
std::string agent_role(const CaseRecord& c);

/// True when `key` names a toolbench task item ("task/<uuid>/<trial>").
bool is_task_item(const std::string& key);
/// nullopt when the case has no task items.
std::optional<TaskSummary> summarize_tasks(const CaseRecord& c);
/// "3 tasks failed in 7 of 140 trials; 2 other items" (the last part only when there are any).
std::string failing_count(const TaskSummary& s);

/// One toolbench case of a run, for the side-by-side view of its agents.
struct AgentColumn {
  std::string name;  ///< the case's display name, with " (ceiling)" for the oracle agent and " (floor)"
                     ///< for the heuristic one
  TaskSummary tasks;
};
/// The cases of `g` that have task items, in run order.
std::vector<AgentColumn> agent_columns(const WorkloadGroup& g);

}  // namespace mlsb::reports::detail
