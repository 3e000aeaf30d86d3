#include "mcp/rpc_session.hpp"

#include <climits>

#include "mcp/client.hpp"
#include "mcp/jsonrpc.hpp"

namespace mlsb::mcp {

using nlohmann::json;

namespace {

/// What makes `response` (a message classify()ed as a response) malformed, or "" when it is not.
std::string malformed(const json& response) {
  const auto err = response.find("error");
  if (err == response.end()) return "";
  if (response.contains("result")) return "it has both `result` and `error`";
  if (!err->is_object()) return "its `error` is not an object";
  const auto code = err->find("code");
  if (code == err->end() || !code->is_number_integer()) return "its error `code` is missing or not an integer";
  if (code->is_number_unsigned() ? code->get<uint64_t>() > uint64_t{INT_MAX}
                                 : code->get<int64_t>() < INT_MIN || code->get<int64_t>() > INT_MAX) {
    return "its error `code` is out of range";
  }
  const auto message = err->find("message");
  if (message == err->end() || !message->is_string()) return "its error `message` is missing or not a string";
  return "";
}

}  // namespace

RpcSession::RpcSession(std::unique_ptr<Transport> transport, WarningSink warn,
                       std::map<std::string, RequestHandler> handlers)
    : transport_(std::move(transport)), warn_(std::move(warn)), handlers_(std::move(handlers)) {
  transport_->start([this](json m) { on_message(std::move(m)); },
                    [this](const std::string& reason) { on_closed(reason); });
}

RpcSession::~RpcSession() { close(); }

json RpcSession::request(const std::string& method, json params, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto pending = std::make_shared<Pending>();
  int64_t id = 0;
  {
    std::lock_guard lock(mu_);
    if (ended_) throw McpError(*ended_);
    id = next_id_++;
    pending_.emplace(id, pending);
  }
  auto forget = [&] {
    std::lock_guard lock(mu_);
    pending_.erase(id);
  };
  try {
    transport_->send(jsonrpc::request(id, method, std::move(params)), timeout);
  } catch (...) {
    forget();
    throw;
  }
  // Stdio reads the reply on this thread; other transports deliver it from theirs, and the wait below
  // is then where this thread sleeps.
  transport_->read_until(
      [&] {
        std::lock_guard lock(mu_);
        return pending->done;
      },
      deadline);
  std::unique_lock lock(mu_);
  if (!pending->cv.wait_until(lock, deadline, [&] { return pending->done; })) {
    pending_.erase(id);
    throw TimeoutError(prefix() + "request '" + method + "' timed out after " +
                       std::to_string(timeout.count()) + " ms");
  }
  if (pending->ended) throw McpError(*pending->ended + " (while waiting for '" + method + "')");
  json& response = pending->response;
  if (const std::string problem = malformed(response); !problem.empty()) {
    throw McpError(prefix() + "malformed response to '" + method + "': " + problem + ": " +
                   jsonrpc::dump_excerpt(response));
  }
  if (const auto err = response.find("error"); err != response.end()) {
    const int code = err->at("code").get<int>();
    throw RpcError(code, prefix() + "'" + method + "' failed: " + err->at("message").get<std::string>() +
                             " (JSON-RPC error " + std::to_string(code) + ")",
                   err->value("data", json()));
  }
  return std::move(response.at("result"));  // the request is over: nothing else reads it
}

void RpcSession::notify(const std::string& method, const json& params, std::chrono::milliseconds timeout) {
  {
    std::lock_guard lock(mu_);
    if (ended_) throw McpError(*ended_);
  }
  transport_->send(jsonrpc::notification(method, params), timeout);
}

void RpcSession::close() noexcept {
  {
    std::lock_guard lock(mu_);
    if (closed_) return;
    closed_ = true;
  }
  on_closed(prefix() + "connection closed");
  transport_->close();
}

void RpcSession::on_message(json message) {
  if (message.is_array()) {  // a batch
    for (auto& m : message) on_message(std::move(m));
    return;
  }
  switch (jsonrpc::classify(message)) {
    case jsonrpc::Kind::response: on_response(std::move(message)); break;
    case jsonrpc::Kind::request: on_server_request(message); break;
    case jsonrpc::Kind::notification: break;  // logging/progress/list_changed: nothing to do for us
    case jsonrpc::Kind::invalid:
      warn_("ignoring a message that is not JSON-RPC 2.0: " + jsonrpc::dump_excerpt(message));
      break;
  }
}

void RpcSession::on_response(json&& message) {
  const json& id = message["id"];
  std::shared_ptr<Pending> pending;
  {
    std::lock_guard lock(mu_);
    const auto it = id.is_number_integer() ? pending_.find(id.get<int64_t>()) : pending_.end();
    if (it == pending_.end()) {
      warn_("ignoring a response with unknown id " + id.dump());
      return;
    }
    pending = std::move(it->second);
    pending_.erase(it);
    pending->response = std::move(message);  // results can be large: moved, not copied
    pending->done = true;
  }
  pending->cv.notify_one();  // unlocked: the waiter wakes to a free mutex
}

void RpcSession::on_server_request(const json& message) {
  const std::string& method = message["method"].get_ref<const std::string&>();
  json reply;
  if (method == "ping") {
    reply = jsonrpc::result(message["id"], json::object());
  } else if (const auto h = handlers_.find(method); h != handlers_.end()) {
    try {
      reply = jsonrpc::result(message["id"], h->second(message.value("params", json::object())));
    } catch (const std::exception& e) {
      reply = jsonrpc::error(message["id"], jsonrpc::kInternalError, e.what());
    }
  } else {
    reply = jsonrpc::error(message["id"], jsonrpc::kMethodNotFound, "Method not found: " + method);
  }
  try {
    transport_->send(reply, std::chrono::seconds(10));
  } catch (const std::exception& e) {
    warn_(std::string("cannot answer the server's '") + method + "' request: " + e.what());
  }
}

void RpcSession::on_closed(const std::string& reason) {
  std::lock_guard lock(mu_);
  if (!ended_) ended_ = reason;
  for (auto& [id, p] : pending_) {
    p->ended = *ended_;
    p->done = true;
    p->cv.notify_one();
  }
  pending_.clear();
}

}  // namespace mlsb::mcp
