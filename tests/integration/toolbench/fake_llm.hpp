#pragma once
// A chat-completion server for tests on 127.0.0.1 (cpp-httplib): OpenAI's Chat Completions at
// /v1/chat/completions and Anthropic's Messages at /v1/messages, answering in each wire format. By
// default it replays the labels of the task whose query opens the conversation, one tool call per
// reply, then answers "done" (a perfect model); queued replies (recorded bodies, errors, replies cut
// short, slow replies) are served first. Under the path prefix /deny it answers 401 quoting the key
// it was sent, as real APIs do.
#include <chrono>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "workloads/toolbench/task.hpp"

namespace mlsb::test {

class FakeLlm {
 public:
  /// One reply. `cut_short`: the body is announced longer than sent and the connection drops.
  struct Reply {
    int status = 200;
    std::string body;
    std::map<std::string, std::string> headers;
    bool cut_short = false;
    std::chrono::milliseconds delay{0};
  };
  /// What a request carried.
  struct Request {
    std::string path, authorization, api_key, anthropic_version;
    nlohmann::json body;
  };

  explicit FakeLlm(std::vector<toolbench::Task> tasks);
  ~FakeLlm();
  FakeLlm(const FakeLlm&) = delete;
  FakeLlm& operator=(const FakeLlm&) = delete;

  /// The base URL an agent takes: ".../v1" for "openai", without it for "anthropic"; `prefix` ("/deny")
  /// goes before.
  std::string base_url(const std::string& api, const std::string& prefix = "") const;
  /// Served before the label replay, in order.
  void queue(Reply reply);
  /// Served for every request (after the queue), instead of the label replay.
  void always(Reply reply);
  std::vector<Request> requests() const;

  /// A recorded reply body from tests/data/llm_replies/<name>.json.
  static std::string recorded(const std::string& name);

 private:
  void handle(const httplib::Request& req, httplib::Response& res);
  nlohmann::json replay_labels(bool anthropic, const nlohmann::json& body) const;

  std::vector<toolbench::Task> tasks_;
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  mutable std::mutex mu_;
  std::deque<Reply> queue_;
  std::optional<Reply> always_;
  std::vector<Request> requests_;
};

}  // namespace mlsb::test
