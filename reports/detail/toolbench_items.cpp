#include "reports/detail/toolbench_items.hpp"

#include <cstdlib>
#include <map>
#include <set>
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

// A trial's outcome added to a group; `uuids` collects the group's distinct tasks.
void add(TaskGroup& g, std::set<std::string>& uuids, const std::string& uuid, bool ast, bool pass, bool called,
         double latency_ms) {
  if (called) g.latency_ms = (g.latency_ms * g.called + latency_ms) / (g.called + 1), ++g.called;
  ++g.trials;
  g.ast_ok += ast;
  g.passed += pass;
  uuids.insert(uuid);
  g.tasks = static_cast<int>(uuids.size());
}

struct Grouped {
  TaskGroup group;
  std::set<std::string> uuids;
};

std::vector<TaskGroup> values(std::map<std::string, Grouped>& m) {
  std::vector<TaskGroup> out;
  for (auto& [name, g] : m) {
    g.group.name = name;
    out.push_back(g.group);
  }
  return out;
}

}  // namespace

bool is_task_item(const std::string& key) { return key.starts_with("task/"); }

std::string agent_role(const CaseRecord& c) {
  const std::string agent = field(c.params, "agent", std::string());
  return agent == "oracle" ? "ceiling" : agent == "heuristic" ? "floor" : "";
}

std::optional<TaskSummary> summarize_tasks(const CaseRecord& c) {
  TaskSummary s;
  s.all.name = "all";
  std::set<std::string> all_uuids;
  std::map<std::string, Grouped> categories, tools;
  std::map<std::string, int> seen;           // item key -> times seen: a key repeats once per sample
  std::map<std::string, size_t> failing_at;  // uuid -> its row in s.failing
  std::map<std::string, int> trials_of;      // uuid -> its trials
  for (const auto& [key, item] : c.items) {
    if (!is_task_item(key) || !item.is_object()) {
      ++s.other_items;
      continue;
    }
    const int sample = seen[key]++;
    const bool ast = field(item, "tool_match", false) && field(item, "param_match", false);
    const bool pass = field(item, "pass", false);
    const double latency = field(item, "latency_ms", 0.0);
    const auto calls = item.value("calls", nlohmann::json::array());
    const bool called = calls.is_array() && !calls.empty();
    const std::string category = field(item, "category", std::string("(none)"));
    const std::string uuid = field(item, "uuid", key);
    add(s.all, all_uuids, uuid, ast, pass, called, latency);
    Grouped& cat = categories[category];
    add(cat.group, cat.uuids, uuid, ast, pass, called, latency);
    Grouped& tool = tools[field(item, "tool", std::string("(none)"))];
    add(tool.group, tool.uuids, uuid, ast, pass, called, latency);
    ++trials_of[uuid];
    if (pass) continue;
    ++s.failing_trials;
    auto [it, first] = failing_at.emplace(uuid, s.failing.size());
    if (first)
      s.failing.push_back({uuid, category, field(item, "query", std::string()),
                           calls_text(item.value("expected", nlohmann::json())), calls_text(calls),
                           field(item, "reason", std::string()), 0, 0, {}});
    FailedTask& f = s.failing[it->second];
    ++f.failed;
    const auto slash = key.rfind('/');
    f.where.push_back("s" + std::to_string(sample) + "/t" +
                      (slash == std::string::npos ? std::string("0") : key.substr(slash + 1)));
  }
  if (s.all.trials == 0) return std::nullopt;
  for (auto& f : s.failing) f.trials = trials_of[f.uuid];
  s.by_category = values(categories);
  s.by_tool = values(tools);
  return s;
}

std::string failing_count(const TaskSummary& s) {
  std::string out = std::to_string(s.failing.size()) + (s.failing.size() == 1 ? " task" : " tasks") + " failed in " +
                    std::to_string(s.failing_trials) + " of " + std::to_string(s.all.trials) + " trials";
  if (s.other_items) out += "; " + std::to_string(s.other_items) + " other items";
  return out;
}

std::vector<AgentColumn> agent_columns(const WorkloadGroup& g) {
  std::vector<AgentColumn> out;
  for (std::size_t i = 0; i < g.cases.size(); ++i) {
    auto tasks = summarize_tasks(*g.cases[i]);
    if (!tasks) continue;
    const std::string role = agent_role(*g.cases[i]);
    out.push_back({(g.names[i].empty() ? g.workload : g.names[i]) + (role.empty() ? "" : " (" + role + ")"),
                   std::move(*tasks)});
  }
  return out;
}

}  // namespace mlsb::reports::detail
