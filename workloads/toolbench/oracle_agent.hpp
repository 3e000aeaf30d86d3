#pragma once
// The oracle agent: replays each task's labels in order, so its score is the ceiling of a task set
// (a label that disagrees with the fixture still fails execution).
#include <map>
#include <string>
#include <vector>

#include "workloads/toolbench/agent.hpp"

namespace mlsb::toolbench {

class OracleAgent final : public Agent {
 public:
  explicit OracleAgent(const std::vector<Task>& tasks);
  std::string name() const override { return "oracle"; }
  void begin(const TaskPrompt& task, int trial) override;
  AgentAction next() override;
  void observe(const ToolCall&, const ToolOutcome&) override {}

 private:
  std::map<std::string, std::vector<Label>> labels_;  ///< by uuid
  const std::vector<Label>* current_ = nullptr;
  std::size_t step_ = 0;
};

}  // namespace mlsb::toolbench
