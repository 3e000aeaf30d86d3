#pragma once
// The OpenAI Chat Completions wire format with function tools, as served by OpenAI and by the
// OpenAI-compatible servers (vLLM, SGLang, llama.cpp's server, Ollama). Reference: OpenAI API
// reference, "Create chat completion" (`tools`, `tool_calls`, role "tool" messages).
#include "workloads/toolbench/agents/chat_format.hpp"

namespace mlsb::toolbench {

/// POST {base}/chat/completions (the base URL includes the version, e.g. http://localhost:8000/v1),
/// `Authorization: Bearer KEY`. Request: model, messages (system first), tools [{type: function,
/// function: {name, description, parameters}}], tool_choice "auto", temperature, max_tokens, seed.
/// Reply: choices[0].message {content, tool_calls [{id, function: {name, arguments (a JSON string)}}]},
/// choices[0].finish_reason, usage {prompt_tokens, completion_tokens}. Arguments "" count as {}.
/// Results go back as one {role: tool, tool_call_id, content} message per call.
class OpenAiFormat final : public ChatFormat {
 public:
  std::string name() const override { return "openai"; }
  std::string default_base_url() const override { return "https://api.openai.com/v1"; }
  std::string endpoint(std::string_view base_url) const override;
  std::vector<std::string> headers(const std::string& api_key) const override;
  nlohmann::json user_message(const std::string& text) const override;
  nlohmann::json request(const std::string& system, const nlohmann::json& messages, const std::vector<ApiTool>& tools,
                         const Sampling& sampling) const override;
  ModelReply parse(const nlohmann::json& body) const override;
  void append_results(nlohmann::json& messages, const std::vector<CallResult>& results) const override;
};

}  // namespace mlsb::toolbench
