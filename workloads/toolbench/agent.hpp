#pragma once
// The agent interface: what the toolbench runner asks of anything that solves tasks (the oracle, the
// heuristic, LLM agents). The runner owns servers, fixtures, limits and scoring; an agent only decides.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "workloads/toolbench/agents/model_options.hpp"
#include "workloads/toolbench/task.hpp"

namespace mlsb::toolbench {

/// What an agent is shown of a task: never the labels.
struct TaskPrompt {
  std::string uuid;
  std::string category;
  std::string query;
  std::vector<ToolSpec> tools;
  std::map<std::string, std::vector<std::string>> server_tools;  ///< server -> tool names
};

/// A tool call the agent wants made. `server` may be empty: the runner then takes the server whose
/// tool list (TaskPrompt::server_tools) holds `name`. `invalid`, when set, says why the call cannot be
/// made as the model asked (arguments that are not JSON, or not an object; `arguments` then holds what
/// it sent): the runner sends nothing and records it as the call's error, so it is scored as a miss.
struct ToolCall {
  std::string name;
  nlohmann::json arguments = nlohmann::json::object();
  std::string server;
  std::string invalid;
};

/// What came back from a call. `error` is set when no MCP result came back at all (the server could
/// not be started or reached, died, timed out, answered a JSON-RPC error); otherwise `is_error`,
/// `content` and `text` are the tools/call result. `latency_ms` is the tools/call round trip only
/// (0 when no request was sent).
struct ToolOutcome {
  std::string error;
  bool is_error = false;
  nlohmann::json content = nlohmann::json::array();
  std::string text;
  /// Wall time of the tools/call request (ms), answered or not: a call that timed out or lost its
  /// transport keeps the time until it was given up. 0 when no request was sent (no such server).
  double latency_ms = 0;
  /// The server answered (a result or a JSON-RPC error). Only answered calls enter the
  /// call_latency_p50_ms / _p95_ms percentiles: a timeout measures the timeout, not the server.
  bool answered = false;
};

/// The agent's next move: a tool call, or (when `call` is empty) a final answer in `answer`.
struct AgentAction {
  std::optional<ToolCall> call;
  std::string answer;
};

/// One model request of an episode (LLM agents only): its wall time in ms (every attempt and the
/// backoff between them), the attempts made (1 = no retry), the tokens it billed, the API's stop
/// reason and how many tool calls it asked for.
struct ModelTurn {
  double latency_ms = 0;
  int attempts = 0;
  int64_t input_tokens = 0;
  int64_t output_tokens = 0;
  std::string stop_reason;
  std::size_t calls = 0;
};

/// Thrown by an agent that cannot go on for a reason other than its model's answers: the API still
/// failing after its retries, rejected credentials, a run budget or the task deadline used up. The
/// trial is recorded as an agent error, apart from wrong answers.
struct AgentError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// A multi-step agent. For each task trial the runner calls begin(), then alternates next() and, after
/// each call it made, observe(), until next() gives a final answer or the step limit is reached.
/// Implementations may throw std::exception from any method; the runner records that trial as failed
/// with the message (the suite goes on).
class Agent {
 public:
  virtual ~Agent() = default;
  virtual std::string name() const = 0;
  /// Starts an episode for one task trial (`trial` counts from 0; sampling agents may use it).
  virtual void begin(const TaskPrompt& task, int trial) = 0;
  virtual AgentAction next() = 0;
  virtual void observe(const ToolCall& call, const ToolOutcome& outcome) = 0;
  /// The model requests of the current episode, in order (empty for agents without a model).
  virtual std::vector<ModelTurn> turns() const { return {}; }
};

/// The prompt of `task` (everything but its labels). With `max_tools` > 0 and more tools than that,
/// only the `max_tools` that rank first by BM25 against the query (rank_tools, tool_retrieval.hpp) are
/// offered, in rank order, and `server_tools` lists only those.
TaskPrompt prompt_of(const Task& task, int64_t max_tools = 0);

/// Names accepted by make_agent.
std::vector<std::string> agent_names();
/// Builds the agent `name` for `tasks` (the oracle reads their labels; the LLM agents `openai` and
/// `anthropic` take `model`). Throws std::invalid_argument for an unknown name, listing the known
/// ones, and for an LLM agent whose options are unusable (see make_llm_agent).
std::unique_ptr<Agent> make_agent(std::string_view name, const std::vector<Task>& tasks, const ModelOptions& model = {});

}  // namespace mlsb::toolbench
