#pragma once
// JSON-RPC 2.0 message construction and classification (https://www.jsonrpc.org/specification).
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace mlsb::mcp::jsonrpc {

inline constexpr int kParseError = -32700;
inline constexpr int kInvalidRequest = -32600;
inline constexpr int kMethodNotFound = -32601;
inline constexpr int kInvalidParams = -32602;
inline constexpr int kInternalError = -32603;

/// A request; `params` is omitted when null.
nlohmann::json request(int64_t id, const std::string& method, const nlohmann::json& params);
/// A notification (no id); `params` is omitted when null.
nlohmann::json notification(const std::string& method, const nlohmann::json& params);
/// A success response echoing `id`.
nlohmann::json result(const nlohmann::json& id, const nlohmann::json& result);
/// An error response echoing `id`.
nlohmann::json error(const nlohmann::json& id, int code, const std::string& message);

enum class Kind { request, notification, response, invalid };
/// What an incoming message is: a response has `result` or `error` and an id; a request has a string
/// `method` and an id; a notification has a `method` and no id.
Kind classify(const nlohmann::json& message);

}  // namespace mlsb::mcp::jsonrpc
