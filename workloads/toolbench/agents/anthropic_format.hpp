#pragma once
// Anthropic's Messages API wire format with client tools. Reference: Anthropic API reference,
// "Messages" (`tools`, `tool_use` and `tool_result` content blocks), API version 2023-06-01.
#include "workloads/toolbench/agents/chat_format.hpp"

namespace mlsb::toolbench {

/// POST {base}/v1/messages (base e.g. https://api.anthropic.com), `x-api-key: KEY`,
/// `anthropic-version: 2023-06-01`. Request: model, max_tokens, system, messages, tools [{name,
/// description, input_schema}], temperature (no seed: the API has none). Reply: content blocks
/// ({type: text, text} and {type: tool_use, id, name, input (an object)}), stop_reason, usage
/// {input_tokens, output_tokens}. Results go back as one user message of tool_result blocks
/// ({tool_use_id, content, is_error}).
class AnthropicFormat final : public ChatFormat {
 public:
  std::string name() const override { return "anthropic"; }
  std::string default_base_url() const override { return "https://api.anthropic.com"; }
  std::string endpoint(std::string_view base_url) const override;
  std::vector<std::string> headers(const std::string& api_key) const override;
  nlohmann::json user_message(const std::string& text) const override;
  nlohmann::json request(const std::string& system, const nlohmann::json& messages, const std::vector<ApiTool>& tools,
                         const Sampling& sampling) const override;
  ModelReply parse(const nlohmann::json& body) const override;
  void append_results(nlohmann::json& messages, const std::vector<CallResult>& results) const override;
};

}  // namespace mlsb::toolbench
