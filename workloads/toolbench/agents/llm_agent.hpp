#pragma once
// The LLM agent: a chat model with tool calling (any ChatFormat) solving a task in a multi-step loop.
// Each model reply's calls are handed to the runner one by one; once all their results are back, they
// go to the model in one request, until the model answers without a call (or the runner's step limit).
#include <deque>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "workloads/toolbench/agent.hpp"
#include "workloads/toolbench/agents/chat_format.hpp"
#include "workloads/toolbench/agents/model_options.hpp"

namespace mlsb::toolbench {

/// The system prompt every LLM agent is given.
extern const char* const kAgentSystemPrompt;

class LlmAgent final : public Agent {
 public:
  LlmAgent(std::unique_ptr<ChatFormat> format, ModelOptions options);
  std::string name() const override { return format_->name(); }
  void begin(const TaskPrompt& task, int trial) override;
  /// Sends a request when no call of the last reply is left (request_model: throws AgentError when the
  /// API cannot be got past). A call with unusable arguments is handed on with ToolCall::invalid set.
  AgentAction next() override;
  void observe(const ToolCall& call, const ToolOutcome& outcome) override;
  std::vector<ModelTurn> turns() const override { return turns_; }

 private:
  std::unique_ptr<ChatFormat> format_;
  ModelOptions options_;
  std::mt19937_64 jitter_;
  std::vector<ApiTool> tools_;
  nlohmann::json messages_;
  std::deque<ModelCall> pending_;   ///< calls of the last reply not yet handed out
  std::deque<std::string> waiting_;  ///< ids of calls handed out whose results are not back
  std::vector<CallResult> results_;  ///< results of the last reply's calls so far
  std::vector<ModelTurn> turns_;
  std::chrono::steady_clock::time_point deadline_;
  int trial_ = 0;
};

/// An LLM agent: `name` "openai" (Chat Completions) or "anthropic" (Messages). Throws
/// std::invalid_argument when `options.model` is empty or the base URL is not http(s)://.
std::unique_ptr<Agent> make_llm_agent(std::string_view name, const ModelOptions& options);
/// Whether make_llm_agent knows `name`.
bool is_llm_agent(std::string_view name);
/// The settings an LLM agent cannot run without: throws std::invalid_argument when `model` is empty or
/// `base_url` ("" = the provider's) is not http(s)://.
void check_llm_settings(std::string_view name, const std::string& model, const std::string& base_url);

}  // namespace mlsb::toolbench
