#pragma once
// A Transport for unit tests: records what the client sends and lets the test (or a scripted responder)
// deliver messages back, from any thread.
#include <condition_variable>
#include <functional>
#include <mutex>
#include <vector>

#include "mcp/transport.hpp"

namespace mlsb::mcp::test {

class FakeTransport final : public Transport {
 public:
  /// Called for every sent message; may call deliver() (synchronously, like an HTTP reply).
  using Responder = std::function<void(const nlohmann::json& sent, FakeTransport& self)>;

  explicit FakeTransport(Responder responder = {}) : responder_(std::move(responder)) {}

  void start(MessageHandler on_message, CloseHandler on_close) override {
    on_message_ = std::move(on_message);
    on_close_ = std::move(on_close);
  }
  void send(const nlohmann::json& message, std::chrono::milliseconds) override {
    {
      std::lock_guard lock(mu_);
      sent_.push_back(message);
      cv_.notify_all();
    }
    if (responder_) responder_(message, *this);
  }
  void set_protocol_version(const std::string& version) override { protocol_version = version; }
  void close() noexcept override { closed = true; }

  void deliver(nlohmann::json message) { on_message_(std::move(message)); }
  void end(const std::string& reason) { on_close_(reason); }
  /// Waits until at least `n` messages were sent; returns a copy of them.
  std::vector<nlohmann::json> wait_sent(size_t n) {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return sent_.size() >= n; });
    return sent_;
  }

  std::string protocol_version;
  bool closed = false;

 private:
  Responder responder_;
  MessageHandler on_message_;
  CloseHandler on_close_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<nlohmann::json> sent_;
};

}  // namespace mlsb::mcp::test
