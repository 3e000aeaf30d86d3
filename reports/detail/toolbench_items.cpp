#include "reports/detail/toolbench_items.hpp"

#include <cstdlib>
#include <map>
#include <type_traits>

#include "reports/detail/report_text.hpp"

namespace mlsb::reports::detail {
namespace {

// The field's value, or `fallback` when absent or of another type (items come from other code).
template <class T>
T field(const nlohmann::json& item, const char* key, T fallback) {
  const auto it = item.find(key);
  if (it == item.end()) return fallback;
  if constexpr (std::is_same_v<T, bool>) return it->is_boolean() ? it->template get<bool>() : fallback;
  else if constexpr (std::is_same_v<T, double>) return it->is_number() ? it->template get<double>() : fallback;
  else return it->is_string() ? it->template get<std::string>() : fallback;
}

std::string calls_text(const nlohmann::json& calls) {
  if (!calls.is_array()) return calls.is_null() ? "" : call_text(calls);
  std::string out;
  for (const auto& c : calls) out += (out.empty() ? "" : "; ") + call_text(c);
  return out.empty() ? "(no call)" : out;
}

void add(TaskGroup& g, bool ast, bool pass, double latency_ms) {
  g.latency_ms = (g.latency_ms * g.tasks + latency_ms) / (g.tasks + 1);
  ++g.tasks;
  g.ast_ok += ast;
  g.passed += pass;
}

std::vector<TaskGroup> values(std::map<std::string, TaskGroup>& m) {
  std::vector<TaskGroup> out;
  for (auto& [name, g] : m) {
    g.name = name;
    out.push_back(g);
  }
  return out;
}

}  // namespace

bool is_task_item(const std::string& key) { return key.starts_with("task/"); }

std::optional<TaskSummary> summarize_tasks(const CaseRecord& c) {
  TaskSummary s;
  s.all.name = "all";
  std::map<std::string, TaskGroup> categories, tools;
  for (const auto& [key, item] : c.items) {
    if (!is_task_item(key) || !item.is_object()) {
      ++s.other_items;
      continue;
    }
    const bool ast = field(item, "tool_match", false) && field(item, "param_match", false);
    const bool pass = field(item, "pass", false);
    const double latency = field(item, "latency_ms", 0.0);
    const std::string category = field(item, "category", std::string("(none)"));
    add(s.all, ast, pass, latency);
    add(categories[category], ast, pass, latency);
    add(tools[field(item, "tool", std::string("(none)"))], ast, pass, latency);
    if (!pass) {
      FailedTask f{field(item, "uuid", std::string()), category, field(item, "query", std::string()),
                   calls_text(item.value("expected", nlohmann::json())),
                   calls_text(item.value("calls", nlohmann::json::array())), field(item, "reason", std::string()), 0};
      const auto slash = key.rfind('/');
      f.trial = slash == std::string::npos ? 0 : std::atoi(key.c_str() + slash + 1);
      s.failing.push_back(std::move(f));
    }
  }
  if (s.all.tasks == 0) return std::nullopt;
  s.by_category = values(categories);
  s.by_tool = values(tools);
  return s;
}

std::vector<AgentColumn> agent_columns(const WorkloadGroup& g) {
  std::vector<AgentColumn> out;
  for (std::size_t i = 0; i < g.cases.size(); ++i) {
    auto tasks = summarize_tasks(*g.cases[i]);
    if (!tasks) continue;
    const std::string agent = field(g.cases[i]->params, "agent", std::string());
    const std::string role = agent == "oracle" ? " (ceiling)" : agent == "heuristic" ? " (floor)" : "";
    out.push_back({(g.names[i].empty() ? g.workload : g.names[i]) + role, std::move(*tasks)});
  }
  return out;
}

}  // namespace mlsb::reports::detail
