// The HTML report: one self-contained file (inline CSS and SVG, no scripts; a Content-Security-Policy
// forbids any network fetch), readable offline.
#include <algorithm>
#include <map>

#include "reports/detail/case_charts.hpp"
#include "reports/detail/html_page.hpp"
#include "reports/detail/renderers.hpp"
#include "reports/detail/series_items.hpp"
#include "reports/detail/svg_chart.hpp"
#include "reports/detail/tables.hpp"
#include "reports/detail/xy_chart.hpp"

namespace mlsb::reports::detail {
namespace {

// A chart per series a case stores ("series/<name>/<i>" items: a training loss curve with its eval loss
// marked, a load per expert as columns), labelled as its "chart/<name>" item says.
void series_charts(std::string& out, const CaseRecord& c, const std::string& name) {
  for (const SeriesChart& s : collect_series(c)) {
    const std::string caption = s.caption + " of " + name + " (" + std::to_string(s.points.size()) + " points)";
    out += html_figure(caption, line_chart_svg(caption, s.x_label, s.y_label, s.points, s.options));
  }
}

// A line series (not columns) that two or more ok cases of the workload store under one name (the loss curves of a
// precision sweep, and their gaps to the fp32 reference): one chart with a line per case, named by what differs
// between the cases, the shared reference lines kept (a mark that differs between cases is left to their own charts).
void series_overlays(std::string& out, const WorkloadGroup& g) {
  const std::vector<std::string> labels = distinct_labels(g.names);
  std::map<std::string, std::vector<XySeries>> lines;
  std::map<std::string, SeriesChart> look;  // the first case's chart of each name: its labels and marks
  std::map<std::string, bool> same_marks;
  for (size_t i = 0; i < g.cases.size(); ++i) {
    if (g.cases[i]->status != CaseStatus::Ok) continue;
    for (SeriesChart& s : collect_series(*g.cases[i])) {
      if (s.options.columns) continue;
      lines[s.name].push_back({labels[i], s.points, static_cast<int>(i)});  // a case keeps its colour on every chart
      const auto [at, first] = look.emplace(s.name, s);
      bool& same = same_marks.emplace(s.name, true).first->second;
      if (!first) {
        const auto& a = at->second.options.marks;
        same = same && a.size() == s.options.marks.size() &&
               std::equal(a.begin(), a.end(), s.options.marks.begin(),
                          [](const RefLine& x, const RefLine& y) { return x.y == y.y && x.label == y.label; });
      }
    }
  }
  for (auto& [name, series] : lines) {
    if (series.size() < 2) continue;
    const SeriesChart& s = look.at(name);
    XyOptions options = s.options;
    if (!same_marks.at(name)) options.marks.clear();
    const std::string caption = s.caption + ", one line per case (" + std::to_string(series.size()) + " cases)";
    out += html_figure(caption, line_chart_svg(caption, s.x_label, s.y_label, series, options));
  }
}

// Toolbench agents side by side (two or more cases with tasks): per category, a table of pass rate and
// AST accuracy, and a chart of the pass rate with every agent (the oracle's ceiling and the heuristic's
// floor among them) on it.
void agents_side_by_side(std::string& out, const WorkloadGroup& g) {
  const std::vector<AgentColumn> columns = agent_columns(g);
  if (columns.size() < 2) return;
  out += "<h3>Agents side by side</h3>\n<p>Pass rate / AST accuracy per category (task trials):</p>\n" +
         html_table(agents_side_by_side_table(columns), "agents");
  std::map<std::string, std::vector<Bar>> by_category;
  for (const auto& c : columns) {
    for (const auto& t : c.tasks.by_category) {
      const double rate = static_cast<double>(t.passed) / t.trials;
      by_category[t.name].push_back({c.name, rate, rate, rate, ""});
    }
    const double all = static_cast<double>(c.tasks.all.passed) / c.tasks.all.trials;
    by_category["all categories"].push_back({c.name, all, all, all, ""});
  }
  for (const auto& [category, bars] : by_category)
    out += html_figure("pass rate, " + category + " (higher is better)",
                       bar_chart_svg(g.workload + " pass rate " + category, "ratio", bars));
}

void task_tables(std::string& out, const CaseRecord& c, const std::string& name) {
  const auto tasks = summarize_tasks(c);
  if (!tasks) return;
  out += "<h3>Tasks: " + html_escape(name) + "</h3>\n";
  out += html_table(task_group_table("category", tasks->by_category, tasks->all), "tasks");
  out += html_table(task_group_table("expected tool", tasks->by_tool, tasks->all), "tasks");
  const std::string count = failing_count(*tasks);
  if (tasks->failing.empty()) {
    out += "<p>" + html_escape(count) + "</p>\n";
  } else if (const std::string role = agent_role(c); !role.empty()) {  // a reference agent: folded
    out += "<details><summary>" + html_escape(count + " (the " + role + " agent: a reference point)") + "</summary>\n" +
           html_table(failing_tasks_table(tasks->failing), "failing") + "</details>\n";
  } else {
    out += "<p>" + html_escape(count) + "</p>\n" + html_table(failing_tasks_table(tasks->failing), "failing");
  }
}

// A case's per-part items as tables, folded: the families a workload stores with a row per part.
void item_tables(std::string& out, const CaseRecord& c, const std::string& name) {
  static const std::pair<const char*, const char*> kFamilies[] = {
      {"gemm_error", "GEMM error per site (relative to the fp32 GEMM), underflow and saturation per operand"}};
  for (const auto& [family, caption] : kFamilies) {
    const Table t = item_family_table(c, family);
    if (t.rows.empty()) continue;
    out += "<details><summary>" + html_escape(std::string(caption) + ": " + name) + "</summary>\n" +
           html_table(t, "items") + "</details>\n";
  }
}

// What a reader needs first: how many cases ran and how they ended, each case's primary metric, and every
// case that did not end ok with its reason (or an ok case's warning), before the per-workload detail.
void summary(std::string& out, const std::vector<WorkloadGroup>& groups) {
  Table t;
  t.header = {"case", "status", "primary metric", "median", "reason"};
  t.numeric = {false, false, false, true, false};
  t.text = {true, false, false, false, true};
  int ok = 0, total = 0;
  for (const auto& g : groups)
    for (size_t i = 0; i < g.cases.size(); ++i) {
      const CaseRecord& c = *g.cases[i];
      ++total;
      ok += c.status == CaseStatus::Ok;
      const SummaryRow* s = find_summary(c, c.primary_metric);
      t.rows.push_back({g.names[i], status_name(c.status), c.primary_metric,
                        s ? fmt_num(s->stats.median) + (s->unit.empty() ? "" : " " + s->unit) : "—", c.reason});
      t.row_class.push_back("st-" + status_name(c.status));
    }
  out += "<section id=\"summary\"><h2>Summary</h2>\n<p>" + std::to_string(total) + " cases: " +
         std::to_string(ok) + " ok, " + std::to_string(total - ok) + " not ok</p>\n" + html_table(t, "summary") +
         "</section>\n";
}

}  // namespace

std::string render_html(const RunData& data) {
  const RunRecord& run = data.run;
  const auto groups = group_by_workload(data);
  std::string out;
  out.reserve(4096 + 2048 * data.cases.size());
  out += html_page_head("mlsysbench report: " + (run.suite.empty() ? run.uuid : run.suite + " " + run.uuid));
  out += "<header><h1>mlsysbench report</h1>\n";
  out += html_meta_table(run_fields(run));
  out += "<details><summary>Environment</summary>\n";
  out += html_meta_table(flatten_env(run.env));
  out += "</details></header>\n<nav><a href=\"#summary\">summary</a>";
  for (size_t i = 0; i < groups.size(); ++i)
    out += "<a href=\"#w" + std::to_string(i) + "\">" + html_escape(groups[i].workload) + "</a>";
  out += "</nav>\n";
  if (!groups.empty()) summary(out, groups);
  for (size_t i = 0; i < groups.size(); ++i) {
    const auto& g = groups[i];
    out += "<section id=\"w" + std::to_string(i) + "\"><h2>" + html_escape(g.workload) + "</h2>\n";
    // The charts that tell the story first, then the full tables.
    out += "<p>" + html_escape(status_counts(g)) + "</p>\n";
    sweep_charts(out, g);
    tradeoff_charts(out, g);
    breakdown_charts(out, g);
    metric_charts(out, g);
    agents_side_by_side(out, g);
    series_overlays(out, g);
    for (size_t c = 0; c < g.cases.size(); ++c) series_charts(out, *g.cases[c], g.names[c]);
    out += "<h3>Cases</h3>\n" + html_table(cases_table(g), "cases");
    if (const std::string note = throttle_note(g); !note.empty()) out += "<p>" + html_escape(note) + "</p>\n";
    const Table metrics = metrics_table(g);
    if (!metrics.rows.empty()) out += "<p>Median [95% CI] per metric:</p>\n" + html_table(metrics, "metrics");
    for (size_t c = 0; c < g.cases.size(); ++c) task_tables(out, *g.cases[c], g.names[c]);
    for (size_t c = 0; c < g.cases.size(); ++c) item_tables(out, *g.cases[c], g.names[c]);
    out += "</section>\n";
  }
  if (groups.empty()) out += "<p>This run has no cases.</p>\n";
  out += "</body></html>\n";
  return out;
}

}  // namespace mlsb::reports::detail
