#include "integration/toolbench/fake_llm.hpp"

#include "support/test_support.hpp"

namespace mlsb::test {

using nlohmann::json;

FakeLlm::FakeLlm(std::vector<toolbench::Task> tasks) : tasks_(std::move(tasks)) {
  const auto handler = [this](const httplib::Request& req, httplib::Response& res) { handle(req, res); };
  for (const char* prefix : {"", "/deny"}) {
    server_.Post(std::string(prefix) + "/v1/chat/completions", handler);
    server_.Post(std::string(prefix) + "/v1/messages", handler);
  }
  port_ = server_.bind_to_any_port("127.0.0.1");
  thread_ = std::thread([this] { server_.listen_after_bind(); });
}

FakeLlm::~FakeLlm() {
  server_.stop();
  thread_.join();
}

std::string FakeLlm::base_url(const std::string& api, const std::string& prefix) const {
  return "http://127.0.0.1:" + std::to_string(port_) + prefix + (api == "openai" ? "/v1" : "");
}

void FakeLlm::queue(Reply reply) {
  std::lock_guard lock(mu_);
  queue_.push_back(std::move(reply));
}

void FakeLlm::always(Reply reply) {
  std::lock_guard lock(mu_);
  always_ = std::move(reply);
}

std::vector<FakeLlm::Request> FakeLlm::requests() const {
  std::lock_guard lock(mu_);
  return requests_;
}

std::string FakeLlm::recorded(const std::string& name) {
  return read_file(source_dir() / "tests/data/llm_replies" / (name + ".json"));
}

void FakeLlm::handle(const httplib::Request& req, httplib::Response& res) {
  const bool anthropic = req.path.ends_with("/messages");
  Request seen{req.path, req.get_header_value("Authorization"), req.get_header_value("x-api-key"),
               req.get_header_value("anthropic-version"), json::parse(req.body, nullptr, false)};
  std::optional<Reply> reply;
  {
    std::lock_guard lock(mu_);
    requests_.push_back(seen);
    if (!queue_.empty()) {
      reply = std::move(queue_.front());
      queue_.pop_front();
    } else if (always_) {
      reply = always_;
    }
  }
  if (req.path.starts_with("/deny")) {
    const std::string key = anthropic ? seen.api_key : seen.authorization.substr(seen.authorization.find(' ') + 1);
    res.status = 401;
    res.set_content(json{{"error", {{"message", "Incorrect API key provided: " + key}}}}.dump(), "application/json");
    return;
  }
  if (!reply) reply = Reply{200, replay_labels(anthropic, seen.body).dump(), {}, false, {}};
  std::this_thread::sleep_for(reply->delay);
  res.status = reply->status;
  for (const auto& [k, v] : reply->headers) res.set_header(k, v);
  if (!reply->cut_short) {
    res.set_content(reply->body, "application/json");
    return;
  }
  const std::string body = reply->body;
  res.set_content_provider(body.size() + 100, "application/json",
                           [body](size_t offset, size_t length, httplib::DataSink& sink) {
                             if (offset >= body.size()) return false;  // drops the connection
                             sink.write(body.data() + offset, std::min(length, body.size() - offset));
                             return true;
                           });
}

// The next label of the task whose query opens the conversation, as a tool call, or "done".
json FakeLlm::replay_labels(bool anthropic, const json& body) const {
  std::string query;
  std::size_t results = 0;
  for (const auto& m : body.value("messages", json::array())) {
    if (m.value("role", "") == "tool") ++results;
    if (m.value("role", "") != "user") continue;
    if (m["content"].is_string() && query.empty()) query = m["content"].get<std::string>();
    if (m["content"].is_array())
      for (const auto& block : m["content"]) results += block.value("type", "") == "tool_result";
  }
  const toolbench::Task* task = nullptr;
  for (const auto& t : tasks_)
    if (t.query == query) task = &t;
  const int64_t input = 100 * static_cast<int64_t>(results + 1), output = 10;
  if (!task || results >= task->labels.size()) {
    if (anthropic)
      return {{"id", "msg_done"}, {"type", "message"}, {"role", "assistant"},
              {"content", {{{"type", "text"}, {"text", "done"}}}}, {"stop_reason", "end_turn"},
              {"usage", {{"input_tokens", input}, {"output_tokens", output}}}};
    return {{"id", "chatcmpl-done"}, {"object", "chat.completion"},
            {"choices", {{{"index", 0}, {"message", {{"role", "assistant"}, {"content", "done"}}}, {"finish_reason", "stop"}}}},
            {"usage", {{"prompt_tokens", input}, {"completion_tokens", output}}}};
  }
  const toolbench::Label& l = task->labels[results];
  const std::string id = "call_" + std::to_string(results);
  if (anthropic)
    return {{"id", "msg_" + id}, {"type", "message"}, {"role", "assistant"},
            {"content", {{{"type", "tool_use"}, {"id", id}, {"name", l.name}, {"input", l.input}}}},
            {"stop_reason", "tool_use"}, {"usage", {{"input_tokens", input}, {"output_tokens", output}}}};
  const json call = {{"id", id}, {"type", "function"}, {"function", {{"name", l.name}, {"arguments", l.input.dump()}}}};
  return {{"id", "chatcmpl-" + id}, {"object", "chat.completion"},
          {"choices", {{{"index", 0}, {"message", {{"role", "assistant"}, {"content", nullptr}, {"tool_calls", {call}}}},
                        {"finish_reason", "tool_calls"}}}},
          {"usage", {{"prompt_tokens", input}, {"completion_tokens", output}}}};
}

}  // namespace mlsb::test
