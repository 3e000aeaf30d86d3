// The Markdown report (GitHub-flavoured): the HTML report's tables, without charts.
#include "reports/detail/renderers.hpp"
#include "reports/detail/tables.hpp"
#include "reports/render.hpp"

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
  const std::string count = failing_count(*tasks);
  if (tasks->failing.empty()) {
    out += md_escape(count) + ".\n";
  } else if (const std::string role = agent_role(c); !role.empty()) {  // a reference agent: folded
    out += "<details><summary>" + md_escape(count + " (the " + role + " agent: a reference point)") + "</summary>\n\n" +
           md_table(failing_tasks_table(tasks->failing)) + "\n</details>\n";
  } else {
    out += md_escape(count) + ".\n\n" + md_table(failing_tasks_table(tasks->failing));
  }
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
  if (out.size() > kMaxMarkdownBytes) {
    const std::string marker = "\n\n**Cut here**: the report has " + std::to_string(out.size()) +
                               " bytes, more than a pull-request comment holds; the HTML report (`mlsysbench report " +
                               data.run.uuid.substr(0, 8) + " -o report.html`) has all of it.\n";
    out.resize(out.rfind('\n', kMaxMarkdownBytes - marker.size()));
    out += marker;
  }
  return out;
}

}  // namespace mlsb::reports::detail
