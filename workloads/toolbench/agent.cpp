#include "workloads/toolbench/agent.hpp"

#include <algorithm>
#include <set>
#include <stdexcept>

#include "workloads/toolbench/agents/heuristic_agent.hpp"
#include "workloads/toolbench/agents/llm_agent.hpp"
#include "workloads/toolbench/oracle_agent.hpp"
#include "workloads/toolbench/tool_retrieval.hpp"

namespace mlsb::toolbench {

TaskPrompt prompt_of(const Task& task, int64_t max_tools) {
  TaskPrompt p{task.uuid, task.category, task.query, task.tools, task.server_tools};
  if (max_tools <= 0 || static_cast<int64_t>(task.tools.size()) <= max_tools) return p;
  const std::vector<RankedTool> ranked = rank_tools(task.query, task.tools);
  p.tools.clear();
  std::set<std::string> offered;
  for (int64_t i = 0; i < max_tools; ++i) {
    p.tools.push_back(task.tools[ranked[i].index]);
    offered.insert(p.tools.back().name);
  }
  for (auto& [server, names] : p.server_tools)
    names.erase(std::remove_if(names.begin(), names.end(), [&](const std::string& n) { return !offered.count(n); }),
                names.end());
  return p;
}

std::vector<std::string> agent_names() { return {"oracle", "heuristic", "openai", "anthropic"}; }

std::unique_ptr<Agent> make_agent(std::string_view name, const std::vector<Task>& tasks, const ModelOptions& model) {
  if (name == "oracle") return std::make_unique<OracleAgent>(tasks);
  if (name == "heuristic") return std::make_unique<HeuristicAgent>();
  if (is_llm_agent(name)) return make_llm_agent(name, model);
  std::string known;
  for (const auto& n : agent_names()) known += (known.empty() ? "" : ", ") + n;
  throw std::invalid_argument("unknown agent '" + std::string(name) + "' (known: " + known + ")");
}

}  // namespace mlsb::toolbench
