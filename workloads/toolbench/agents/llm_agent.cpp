#include "workloads/toolbench/agents/llm_agent.hpp"

#include <stdexcept>

#include "workloads/toolbench/agents/anthropic_format.hpp"
#include "workloads/toolbench/agents/model_request.hpp"
#include "workloads/toolbench/agents/openai_format.hpp"

namespace mlsb::toolbench {

using Clock = std::chrono::steady_clock;

const char* const kAgentSystemPrompt =
    "You are an agent that completes the user's task by calling the tools provided. The tools act on "
    "the user's real environment; paths are relative to the working directory unless the task gives "
    "absolute ones. Call the tools the task needs, in order, with arguments taken from the task. When "
    "the task is done, reply with a short final answer and no tool call.";

LlmAgent::LlmAgent(std::unique_ptr<ChatFormat> format, ModelOptions options)
    : format_(std::move(format)), options_(std::move(options)), jitter_(std::random_device{}()) {}

void LlmAgent::begin(const TaskPrompt& task, int trial) {
  tools_ = api_tools(task.tools);
  messages_ = nlohmann::json::array({format_->user_message(task.query)});
  pending_.clear();
  waiting_.clear();
  results_.clear();
  turns_.clear();
  trial_ = trial;
  const auto none = Clock::now() + std::chrono::hours(24 * 365);
  deadline_ = options_.task_deadline.count() > 0 ? Clock::now() + options_.task_deadline : none;
}

AgentAction LlmAgent::next() {
  if (pending_.empty()) {
    Sampling sampling{options_.model, options_.temperature, options_.max_output_tokens, std::nullopt};
    if (options_.seed >= 0) sampling.seed = options_.seed + trial_;
    ModelResponse r = request_model(*format_, options_,
                                    format_->request(kAgentSystemPrompt, messages_, tools_, sampling), deadline_, jitter_);
    turns_.push_back({r.latency_ms, r.attempts, r.reply.input_tokens, r.reply.output_tokens, r.reply.stop_reason,
                      r.reply.calls.size()});
    messages_.push_back(std::move(r.reply.assistant));
    if (r.reply.calls.empty()) return {std::nullopt, r.reply.text};
    pending_.assign(r.reply.calls.begin(), r.reply.calls.end());
  }
  ModelCall c = std::move(pending_.front());
  pending_.pop_front();
  waiting_.push_back(c.id);
  return {ToolCall{mcp_name_of(tools_, c.name), std::move(c.arguments), "", std::move(c.invalid)}, ""};
}

void LlmAgent::observe(const ToolCall&, const ToolOutcome& outcome) {
  if (waiting_.empty()) return;
  results_.push_back(call_result(waiting_.front(), outcome));
  waiting_.pop_front();
  if (!pending_.empty() || !waiting_.empty()) return;
  format_->append_results(messages_, results_);
  results_.clear();
}

bool is_llm_agent(std::string_view name) { return name == "openai" || name == "anthropic"; }

void check_llm_settings(std::string_view name, const std::string& model, const std::string& base_url) {
  if (model.empty()) throw std::invalid_argument("agent '" + std::string(name) + "' needs a model: -p model=NAME");
  if (!base_url.empty() && !base_url.starts_with("http://") && !base_url.starts_with("https://"))
    throw std::invalid_argument("base_url '" + base_url + "' is not an http:// or https:// URL");
}

std::unique_ptr<Agent> make_llm_agent(std::string_view name, const ModelOptions& options) {
  check_llm_settings(name, options.model, options.base_url);
  std::unique_ptr<ChatFormat> format;
  if (name == "openai") format = std::make_unique<OpenAiFormat>();
  else if (name == "anthropic") format = std::make_unique<AnthropicFormat>();
  else throw std::invalid_argument("'" + std::string(name) + "' is not an LLM agent (openai, anthropic)");
  return std::make_unique<LlmAgent>(std::move(format), options);
}

}  // namespace mlsb::toolbench
