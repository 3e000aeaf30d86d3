#include "reports/detail/tables.hpp"

#include <algorithm>
#include <set>

#include "util/text.hpp"

namespace mlsb::reports::detail {

Table cases_table(const WorkloadGroup& g) {
  Table t{{"case", "backend", "comm", "ranks", "status", "primary metric", "median", "95% CI", "n", "rel. stddev",
           "items"},
          {},
          {},
          {false, false, false, true, false, false, true, true, true, true, true},
          {true, false, false, false, true, false, false, false, false, false, false}};
  for (size_t i = 0; i < g.cases.size(); ++i) {
    const CaseRecord* c = g.cases[i];
    const SummaryRow* s = c->status == CaseStatus::Ok ? find_summary(*c, c->primary_metric) : nullptr;
    std::vector<std::string> row{g.names[i], c->backend, c->comm, std::to_string(c->ranks), status_text(*c),
                                 c->primary_metric};
    if (s) {
      row.insert(row.end(), {fmt_num(s->stats.median) + " " + s->unit, fmt_ci(s->stats), std::to_string(s->stats.n),
                             fmt_rel_stddev(s->stats)});
    } else {
      row.insert(row.end(), {"", "", "", ""});
    }
    row.push_back(std::to_string(c->items.size()));
    t.rows.push_back(std::move(row));
    t.row_class.push_back("st-" + status_name(c->status) + (c->throttled ? " throttled" : ""));
  }
  return t;
}

Table metrics_table(const WorkloadGroup& g) {
  Table t{{"case"}, {}, {}, {false}, {true}};
  if (g.metrics.empty()) return t;
  for (const auto& [metric, unit] : g.metrics) {
    t.header.push_back(metric_with_unit(metric, unit));
    t.numeric.push_back(true);
    t.text.push_back(false);
  }
  for (size_t i = 0; i < g.cases.size(); ++i) {
    const CaseRecord* c = g.cases[i];
    if (c->status != CaseStatus::Ok) continue;
    std::vector<std::string> row{g.names[i]};
    for (const auto& m : g.metrics) {
      const SummaryRow* s = find_summary(*c, m.first);
      row.push_back(s ? fmt_num(s->stats.median) + " " + fmt_ci(s->stats) : "");
    }
    t.rows.push_back(std::move(row));
    t.row_class.emplace_back();
  }
  return t;
}

Table item_family_table(const CaseRecord& c, std::string_view family) {
  const std::string prefix = std::string(family) + "/";
  std::vector<const std::pair<std::string, nlohmann::json>*> items;
  std::vector<std::string> keys;
  for (const auto& item : c.items) {
    if (!item.first.starts_with(prefix) || !item.second.is_object()) continue;
    items.push_back(&item);
    for (const auto& [k, v] : item.second.items())
      if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
  }
  // Text columns (a site's recipe) first, then the numbers in the order of their names.
  std::stable_partition(keys.begin(), keys.end(), [&](const std::string& k) {
    return std::any_of(items.begin(), items.end(), [&](const auto* item) {
      return item->second.contains(k) && item->second.at(k).is_string();
    });
  });
  Table t;
  if (items.empty()) return t;
  t.header.push_back(std::string(family));
  t.numeric.push_back(false);
  for (const auto& k : keys) {
    t.header.push_back(k);
    bool numeric = true;
    for (const auto* item : items) numeric = numeric && (!item->second.contains(k) || item->second.at(k).is_number());
    t.numeric.push_back(numeric);
  }
  t.text.assign(t.header.size(), false);
  for (const auto* item : items) {
    std::vector<std::string> row{item->first.substr(prefix.size())};
    for (const auto& k : keys) {
      const auto it = item->second.find(k);
      if (it == item->second.end()) row.push_back("—");
      else if (it->is_number()) row.push_back(fmt_num(it->get<double>()));
      else if (it->is_string()) row.push_back(it->get<std::string>());
      else row.push_back(it->dump());
    }
    t.rows.push_back(std::move(row));
    t.row_class.push_back("");
  }
  return t;
}

Table task_group_table(const std::string& first_column, const std::vector<TaskGroup>& groups, const TaskGroup& all) {
  Table t{{first_column, "tasks", "trials", "AST accuracy", "pass rate", "mean latency of trials with a call (ms)"},
          {}, {}, {false, true, true, true, true, true}, {false, false, false, false, false, false}};
  const auto add = [&](const TaskGroup& g, const std::string& css) {
    t.rows.push_back({g.name, std::to_string(g.tasks), std::to_string(g.trials), fmt_percent(g.ast_ok, g.trials),
                      fmt_percent(g.passed, g.trials), g.called ? fmt_num(g.latency_ms) : kNoEstimate});
    t.row_class.push_back(css);
  };
  for (const auto& g : groups) add(g, "");
  add(all, "total");
  return t;
}

Table failing_tasks_table(const std::vector<FailedTask>& failing) {
  Table t{{"task", "failed", "in (sample/trial)", "category", "query", "expected call", "first failing call", "reason"},
          {},
          {},
          {false, true, false, false, false, false, false, false},
          {true, false, true, false, true, true, true, true}};
  for (const auto& f : failing) {
    std::string where = join(std::vector<std::string>(f.where.begin(), f.where.begin() + std::min<size_t>(f.where.size(), 6)), ", ");
    if (f.where.size() > 6) where += ", ... (" + std::to_string(f.where.size()) + ")";
    t.rows.push_back({f.uuid, std::to_string(f.failed) + " of " + std::to_string(f.trials), where, f.category, f.query,
                      f.expected, f.actual, f.reason});
    t.row_class.push_back("st-failed");
  }
  return t;
}

Table agents_side_by_side_table(const std::vector<AgentColumn>& columns) {
  Table t{{"category"}, {}, {}, {false}, {false}};
  std::set<std::string> categories;
  for (const auto& c : columns) {
    t.header.push_back(c.name + ": pass / AST");
    t.numeric.push_back(true);
    t.text.push_back(false);
    for (const auto& g : c.tasks.by_category) categories.insert(g.name);
  }
  const auto cell = [](const TaskGroup& g) {
    return fmt_percent(g.passed, g.trials) + " / " + fmt_percent(g.ast_ok, g.trials) + " (" + std::to_string(g.trials) + ")";
  };
  for (const auto& category : categories) {
    std::vector<std::string> row{category};
    for (const auto& c : columns) {
      const auto it = std::find_if(c.tasks.by_category.begin(), c.tasks.by_category.end(),
                                   [&](const TaskGroup& g) { return g.name == category; });
      row.push_back(it == c.tasks.by_category.end() ? "" : cell(*it));
    }
    t.rows.push_back(std::move(row));
    t.row_class.emplace_back();
  }
  std::vector<std::string> all{"all"};
  for (const auto& c : columns) all.push_back(cell(c.tasks.all));
  t.rows.push_back(std::move(all));
  t.row_class.push_back("total");
  return t;
}

std::string html_table(const Table& t, const std::string& css_class) {
  // A wide table (many metrics) scrolls inside its own box instead of widening the page.
  std::string out = "<div class=\"wide\"><table class=\"" + css_class + "\"><thead><tr>";
  for (const auto& h : t.header) out += "<th>" + html_escape(h) + "</th>";
  out += "</tr></thead><tbody>";
  for (size_t r = 0; r < t.rows.size(); ++r) {
    out += t.row_class[r].empty() ? "<tr>" : "<tr class=\"" + html_escape(t.row_class[r]) + "\">";
    for (size_t i = 0; i < t.rows[r].size(); ++i)
      out += (t.numeric[i] ? "<td class=\"num\">" : t.text[i] ? "<td class=\"text\">" : "<td>") +
             (i == 0 ? html_breakable(t.rows[r][i]) : html_escape(t.rows[r][i])) + "</td>";  // a case name
    out += "</tr>";
  }
  return out + "</tbody></table></div>\n";
}

std::string md_table(const Table& t) {
  std::string out = "|";
  for (const auto& h : t.header) out += " " + md_escape(h) + " |";
  out += "\n|";
  for (bool num : t.numeric) out += num ? " ---: |" : " --- |";
  out += "\n";
  for (const auto& row : t.rows) {
    out += "|";
    for (const auto& cell : row) out += " " + md_escape(cell) + " |";
    out += "\n";
  }
  return out;
}

}  // namespace mlsb::reports::detail
