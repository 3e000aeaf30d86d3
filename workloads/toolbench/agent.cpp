#include "workloads/toolbench/agent.hpp"

#include <stdexcept>

#include "workloads/toolbench/agents/heuristic_agent.hpp"
#include "workloads/toolbench/oracle_agent.hpp"

namespace mlsb::toolbench {

TaskPrompt prompt_of(const Task& task) {
  return {task.uuid, task.category, task.query, task.tools, task.server_tools};
}

std::vector<std::string> agent_names() { return {"oracle", "heuristic"}; }

std::unique_ptr<Agent> make_agent(std::string_view name, const std::vector<Task>& tasks) {
  if (name == "oracle") return std::make_unique<OracleAgent>(tasks);
  if (name == "heuristic") return std::make_unique<HeuristicAgent>();
  std::string known;
  for (const auto& n : agent_names()) known += (known.empty() ? "" : ", ") + n;
  throw std::invalid_argument("unknown agent '" + std::string(name) + "' (known: " + known + ")");
}

}  // namespace mlsb::toolbench
