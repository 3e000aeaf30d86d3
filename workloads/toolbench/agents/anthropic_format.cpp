#include "workloads/toolbench/agents/anthropic_format.hpp"

#include <stdexcept>

namespace mlsb::toolbench {

using nlohmann::json;

std::string AnthropicFormat::endpoint(std::string_view base_url) const {
  return endpoint_url(base_url, "/v1/messages");
}

std::vector<std::string> AnthropicFormat::headers(const std::string& api_key) const {
  std::vector<std::string> h{"Content-Type: application/json", "anthropic-version: 2023-06-01"};
  if (!api_key.empty()) h.push_back("x-api-key: " + api_key);
  return h;
}

json AnthropicFormat::user_message(const std::string& text) const { return {{"role", "user"}, {"content", text}}; }

json AnthropicFormat::request(const std::string& system, const json& messages, const std::vector<ApiTool>& tools,
                              const Sampling& sampling) const {
  json body = {{"model", sampling.model},
               {"max_tokens", sampling.max_output_tokens},
               {"system", system},
               {"messages", messages},
               {"temperature", sampling.temperature}};
  if (!tools.empty()) {
    body["tools"] = json::array();
    for (const auto& t : tools)
      body["tools"].push_back({{"name", t.name}, {"description", t.description}, {"input_schema", t.parameters}});
  }
  return body;
}

ModelReply AnthropicFormat::parse(const json& body) const {
  const json& content = reply_field(body, "content", "content");
  if (!content.is_array()) throw std::runtime_error("reply's content is not an array");
  ModelReply r;
  for (std::size_t i = 0; i < content.size(); ++i) {
    const json& block = content[i];
    const std::string at = "content[" + std::to_string(i) + "]";
    const json& type = reply_field(block, "type", at + ".type");
    if (type == "text" && block.contains("text") && block["text"].is_string()) {
      r.text += block["text"].get<std::string>();
    } else if (type == "tool_use") {
      const json& id = reply_field(block, "id", at + ".id");
      const json& name = reply_field(block, "name", at + ".name");
      if (!id.is_string() || !name.is_string()) throw std::runtime_error("reply's " + at + " id or name is not a string");
      ModelCall call{id.get<std::string>(), name.get<std::string>(),
                     block.contains("input") ? block["input"] : json::object(), ""};
      call.invalid = arguments_problem(call.arguments);
      r.calls.push_back(std::move(call));
    }
  }
  if (body.contains("stop_reason") && body["stop_reason"].is_string()) r.stop_reason = body["stop_reason"].get<std::string>();
  const json usage = body.contains("usage") ? body["usage"] : json();
  r.input_tokens = token_count(usage, "input_tokens");
  r.output_tokens = token_count(usage, "output_tokens");
  r.assistant = {{"role", "assistant"}, {"content", content}};
  return r;
}

void AnthropicFormat::append_results(json& messages, const std::vector<CallResult>& results) const {
  json blocks = json::array();
  for (const auto& r : results)
    blocks.push_back({{"type", "tool_result"}, {"tool_use_id", r.call_id}, {"content", r.text}, {"is_error", r.is_error}});
  messages.push_back({{"role", "user"}, {"content", std::move(blocks)}});
}

}  // namespace mlsb::toolbench
