#include "workloads/toolbench/oracle_agent.hpp"

#include <stdexcept>

namespace mlsb::toolbench {

OracleAgent::OracleAgent(const std::vector<Task>& tasks) {
  for (const auto& t : tasks) labels_[t.uuid] = t.labels;
}

void OracleAgent::begin(const TaskPrompt& task, int) {
  auto it = labels_.find(task.uuid);
  if (it == labels_.end()) throw std::invalid_argument("oracle: no labels for task " + task.uuid);
  current_ = &it->second;
  step_ = 0;
}

AgentAction OracleAgent::next() {
  if (!current_ || step_ >= current_->size()) return {std::nullopt, "done"};
  const Label& l = (*current_)[step_++];
  return {ToolCall{l.name, l.input, l.server, ""}, ""};
}

}  // namespace mlsb::toolbench
