// The Markdown report (GitHub-flavoured): the HTML report's tables, without charts.
#include "reports/detail/renderers.hpp"
#include "reports/detail/tables.hpp"

namespace mlsb::reports::detail {
namespace {

Table field_table(const std::vector<std::pair<std::string, std::string>>& rows) {
  Table t{{"field", "value"}, {}, {}, {false, false}, {false, true}};
  for (const auto& [k, v] : rows) {
    t.rows.push_back({k, v});
    t.row_class.emplace_back();
  }
  return t;
}

void task_tables_md(std::string& out, const CaseRecord& c, const std::string& name) {
  const auto tasks = summarize_tasks(c);
  if (!tasks) return;
  out += "\n### Tasks: " + md_escape(name) + "\n\n";
  out += md_table(task_group_table("category", tasks->by_category, tasks->all)) + "\n";
  out += md_table(task_group_table("expected tool", tasks->by_tool, tasks->all)) + "\n";
  out += std::to_string(tasks->failing.size()) + " failing task trials";
  if (tasks->other_items) out += "; " + std::to_string(tasks->other_items) + " other items";
  out += ".\n";
  if (!tasks->failing.empty()) out += "\n" + md_table(failing_tasks_table(tasks->failing));
}

}  // namespace

std::string render_md(const RunData& data) {
  std::string out = "# mlsysbench report\n\n" + md_table(field_table(run_fields(data.run)));
  const auto env = flatten_env(data.run.env);
  if (!env.empty()) out += "\n<details><summary>Environment</summary>\n\n" + md_table(field_table(env)) + "\n</details>\n";
  for (const auto& g : group_by_workload(data)) {
    out += "\n## " + md_escape(g.workload) + "\n\n" + md_escape(status_counts(g)) + ".\n\n" + md_table(cases_table(g));
    if (const std::string note = throttle_note(g); !note.empty()) out += "\n" + md_escape(note) + "\n";
    const Table metrics = metrics_table(g);
    if (!metrics.rows.empty()) out += "\nMedian [95% CI] per metric:\n\n" + md_table(metrics);
    if (const auto columns = agent_columns(g); columns.size() >= 2)
      out += "\n### Agents side by side\n\nPass rate / AST accuracy per category (task trials):\n\n" +
             md_table(agents_side_by_side_table(columns));
    for (size_t i = 0; i < g.cases.size(); ++i) task_tables_md(out, *g.cases[i], g.names[i]);
  }
  if (data.cases.empty()) out += "\nThis run has no cases.\n";
  return out;
}

}  // namespace mlsb::reports::detail
