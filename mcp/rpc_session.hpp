#pragma once
// JSON-RPC 2.0 over a Transport: numbered requests whose responses may arrive in any order, each with a
// timeout; notifications; answers to the server's own requests (ping, the methods given handlers;
// -32601 for the rest).
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "mcp/transport.hpp"
#include "mcp/warnings.hpp"

namespace mlsb::mcp {

class RpcSession {
 public:
  /// Answers a server request of its method with handler(params) as the result (an exception becomes a
  /// -32603 error with its message).
  using RequestHandler = std::function<nlohmann::json(const nlohmann::json& params)>;
  /// Starts the transport (throws what Transport::start throws). `handlers`: method -> handler for the
  /// server's requests besides ping.
  RpcSession(std::unique_ptr<Transport> transport, WarningSink warn,
             std::map<std::string, RequestHandler> handlers = {});
  ~RpcSession();
  RpcSession(const RpcSession&) = delete;
  RpcSession& operator=(const RpcSession&) = delete;

  /// Sends a request and waits for its response's `result`. Thread-safe. Throws RpcError (error response),
  /// TimeoutError (no response within `timeout`, sending included; a late response is then logged and
  /// dropped), McpError (connection ended or closed, before or while waiting; a malformed response, e.g. an
  /// error object whose `code` is not an integer or whose `message` is not a string, naming what is wrong).
  nlohmann::json request(const std::string& method, nlohmann::json params, std::chrono::milliseconds timeout);
  /// Sends a notification. Throws McpError when the connection is gone.
  void notify(const std::string& method, const nlohmann::json& params, std::chrono::milliseconds timeout);
  Transport& transport() { return *transport_; }
  /// Closes the transport and fails requests still waiting. Idempotent.
  void close() noexcept;

 private:
  struct Pending {
    std::condition_variable cv;
    bool done = false;
    nlohmann::json response;           ///< the response message
    std::optional<std::string> ended;  ///< set instead when the connection ended
  };

  void on_message(nlohmann::json message);
  void on_response(nlohmann::json&& message);
  void on_server_request(const nlohmann::json& message);
  void on_closed(const std::string& reason);
  std::string prefix() const { return "server '" + warn_.server() + "': "; }

  std::unique_ptr<Transport> transport_;
  WarningSink warn_;
  const std::map<std::string, RequestHandler> handlers_;
  std::mutex mu_;
  std::map<int64_t, std::shared_ptr<Pending>> pending_;
  int64_t next_id_ = 1;
  std::optional<std::string> ended_;  ///< why the connection is gone, once it is
  bool closed_ = false;
};

}  // namespace mlsb::mcp
