#pragma once
// The wire format of a chat API with tool calling, behind one interface: the OpenAI-compatible Chat
// Completions API (openai_format.hpp) and Anthropic's Messages API (anthropic_format.hpp). A format
// builds request bodies and reads replies; the LLM agent (llm_agent.hpp) owns the conversation and the
// transport (model_request.hpp).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "workloads/toolbench/agent.hpp"
#include "workloads/toolbench/agents/tool_names.hpp"

namespace mlsb::toolbench {

/// One tool call in a reply. `name` is as the model spelled it (an API name, see tool_names.hpp).
/// `invalid` says why the arguments cannot be used ("arguments are not JSON: ...", "arguments are not
/// a JSON object"); `arguments` then holds what the model sent (the raw string when it was not JSON).
struct ModelCall {
  std::string id;
  std::string name;
  nlohmann::json arguments = nlohmann::json::object();
  std::string invalid;
};

/// A successful reply. `assistant` is the reply as a conversation message, appended before the
/// results of its calls.
struct ModelReply {
  std::string text;  ///< the assistant's text (its final answer when it made no call)
  std::vector<ModelCall> calls;
  int64_t input_tokens = 0;   ///< as the API billed them
  int64_t output_tokens = 0;
  std::string stop_reason;    ///< finish_reason / stop_reason as sent
  nlohmann::json assistant;
};

/// Per-request sampling settings.
struct Sampling {
  std::string model;
  double temperature = 0;
  int64_t max_output_tokens = 1024;
  std::optional<int64_t> seed;  ///< sent only by formats that have one
};

/// A tool call's result as fed back to the model.
struct CallResult {
  std::string call_id;
  std::string text;  ///< the tool's text, or "error: ..." when the call failed
  bool is_error = false;
};

/// Most bytes of one tool result fed back to the model (a whole file read can be megabytes).
inline constexpr std::size_t kMaxResultBytes = 16 * 1024;
/// What the model is told of `outcome`: its text (cut to kMaxResultBytes at a UTF-8 boundary, marked with
/// the original length: util/text.hpp utf8_excerpt), or
/// "error: <why>" when no result came back or the tool reported isError.
CallResult call_result(const std::string& call_id, const ToolOutcome& outcome);

/// `base_url` without trailing '/' followed by `path` ("/chat/completions").
std::string endpoint_url(std::string_view base_url, std::string_view path);
/// `object[key]` when `object` is an object holding a non-null `key`; else throws std::runtime_error
/// ("reply has no <path>"). For the formats' parse().
const nlohmann::json& reply_field(const nlohmann::json& object, const char* key, const std::string& path);
/// The integer `usage[key]`, or 0 when `usage` is not an object, holds no integer there, or a negative one.
int64_t token_count(const nlohmann::json& usage, const char* key);
/// "" when `arguments` is a JSON object; else why a call with them cannot be made.
std::string arguments_problem(const nlohmann::json& arguments);

class ChatFormat {
 public:
  virtual ~ChatFormat() = default;
  /// "openai" or "anthropic": the agent's name.
  virtual std::string name() const = 0;
  /// The public endpoint's base URL, taken when the user gives none.
  virtual std::string default_base_url() const = 0;
  /// The URL requests are POSTed to, from a base URL (a trailing '/' is ignored).
  virtual std::string endpoint(std::string_view base_url) const = 0;
  /// Request header lines ("Name: value"); the key's lines only when `api_key` is not empty.
  virtual std::vector<std::string> headers(const std::string& api_key) const = 0;
  /// The user's first message.
  virtual nlohmann::json user_message(const std::string& text) const = 0;
  /// A request body for the conversation so far.
  virtual nlohmann::json request(const std::string& system, const nlohmann::json& messages,
                                 const std::vector<ApiTool>& tools, const Sampling& sampling) const = 0;
  /// Reads a 200 reply. Throws std::runtime_error naming the missing or mistyped field ("reply has no
  /// choices[0].message"); a call's unusable arguments are not an error (ModelCall::invalid).
  virtual ModelReply parse(const nlohmann::json& body) const = 0;
  /// Appends the results of one reply's calls, in its order, to `messages`.
  virtual void append_results(nlohmann::json& messages, const std::vector<CallResult>& results) const = 0;
};

}  // namespace mlsb::toolbench
