#include "workloads/toolbench/agents/openai_format.hpp"

#include <stdexcept>

#include "util/json_parse.hpp"

namespace mlsb::toolbench {

using nlohmann::json;

namespace {

// A call's `arguments`: a JSON string as the API specifies (some servers send the object itself).
void read_arguments(const json& function, ModelCall& call) {
  if (!function.contains("arguments") || function["arguments"].is_null()) return;
  const json& a = function["arguments"];
  if (!a.is_string()) {
    call.arguments = a;
    call.invalid = arguments_problem(a);
    return;
  }
  const std::string text = a.get<std::string>();
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) return;  // "" = no arguments
  try {
    call.arguments = parse_json_limited(text);
    call.invalid = arguments_problem(call.arguments);
  } catch (const json::parse_error& e) {
    call.arguments = text;
    call.invalid = "arguments are not JSON: " + json_syntax_error(e);
  } catch (const std::length_error& e) {
    call.arguments = text;
    call.invalid = std::string("arguments are not usable JSON: ") + e.what();
  }
}

}  // namespace

std::string OpenAiFormat::endpoint(std::string_view base_url) const {
  return endpoint_url(base_url, "/chat/completions");
}

std::vector<std::string> OpenAiFormat::headers(const std::string& api_key) const {
  std::vector<std::string> h{"Content-Type: application/json"};
  if (!api_key.empty()) h.push_back("Authorization: Bearer " + api_key);
  return h;
}

json OpenAiFormat::user_message(const std::string& text) const { return {{"role", "user"}, {"content", text}}; }

json OpenAiFormat::request(const std::string& system, const json& messages, const std::vector<ApiTool>& tools,
                           const Sampling& sampling) const {
  json all = json::array({{{"role", "system"}, {"content", system}}});
  for (const auto& m : messages) all.push_back(m);
  json body = {{"model", sampling.model},
               {"messages", std::move(all)},
               {"temperature", sampling.temperature},
               {"max_tokens", sampling.max_output_tokens}};
  if (sampling.seed) body["seed"] = *sampling.seed;
  if (!tools.empty()) {
    body["tools"] = json::array();
    for (const auto& t : tools)
      body["tools"].push_back(
          {{"type", "function"},
           {"function", {{"name", t.name}, {"description", t.description}, {"parameters", t.parameters}}}});
    body["tool_choice"] = "auto";
  }
  return body;
}

ModelReply OpenAiFormat::parse(const json& body) const {
  const json& choices = reply_field(body, "choices", "choices");
  if (!choices.is_array() || choices.empty()) throw std::runtime_error("reply has no choices[0]");
  const json& message = reply_field(choices[0], "message", "choices[0].message");
  if (!message.is_object()) throw std::runtime_error("reply's choices[0].message is not an object");
  ModelReply r;
  if (message.contains("content") && message["content"].is_string()) r.text = message["content"].get<std::string>();
  if (choices[0].contains("finish_reason") && choices[0]["finish_reason"].is_string())
    r.stop_reason = choices[0]["finish_reason"].get<std::string>();
  r.assistant = {{"role", "assistant"}, {"content", r.text.empty() ? json() : json(r.text)}};
  if (message.contains("tool_calls") && message["tool_calls"].is_array() && !message["tool_calls"].empty()) {
    json echoed = json::array();
    const json& calls = message["tool_calls"];
    for (std::size_t i = 0; i < calls.size(); ++i) {
      const std::string at = "choices[0].message.tool_calls[" + std::to_string(i) + "]";
      const json& function = reply_field(calls[i], "function", at + ".function");
      const json& name = reply_field(function, "name", at + ".function.name");
      if (!name.is_string()) throw std::runtime_error("reply's " + at + ".function.name is not a string");
      ModelCall call;
      call.id = calls[i].contains("id") && calls[i]["id"].is_string() ? calls[i]["id"].get<std::string>()
                                                                      : "call_" + std::to_string(i);
      call.name = name.get<std::string>();
      read_arguments(function, call);
      const std::string sent = call.arguments.is_string() ? call.arguments.get<std::string>() : dump_json(call.arguments);
      echoed.push_back({{"id", call.id}, {"type", "function"}, {"function", {{"name", call.name}, {"arguments", sent}}}});
      r.calls.push_back(std::move(call));
    }
    r.assistant["tool_calls"] = std::move(echoed);
  }
  const json usage = body.contains("usage") ? body["usage"] : json();
  r.input_tokens = token_count(usage, "prompt_tokens");
  r.output_tokens = token_count(usage, "completion_tokens");
  return r;
}

void OpenAiFormat::append_results(json& messages, const std::vector<CallResult>& results) const {
  for (const auto& r : results) messages.push_back({{"role", "tool"}, {"tool_call_id", r.call_id}, {"content", r.text}});
}

}  // namespace mlsb::toolbench
