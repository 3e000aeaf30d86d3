#pragma once
// JSON-RPC 2.0 message construction and classification (https://www.jsonrpc.org/specification).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace mlsb::mcp::jsonrpc {

inline constexpr int kParseError = -32700;
inline constexpr int kInvalidRequest = -32600;
inline constexpr int kMethodNotFound = -32601;
inline constexpr int kInvalidParams = -32602;
inline constexpr int kInternalError = -32603;

/// A request; `params` is omitted when null.
nlohmann::json request(int64_t id, const std::string& method, nlohmann::json params);
/// A notification (no id); `params` is omitted when null.
nlohmann::json notification(const std::string& method, const nlohmann::json& params);
/// A success response echoing `id`.
nlohmann::json result(const nlohmann::json& id, const nlohmann::json& result);
/// An error response echoing `id`.
nlohmann::json error(const nlohmann::json& id, int code, const std::string& message);

/// Most bytes of one incoming message (a stdio line, an HTTP body, an SSE event's data); a transport that
/// receives a longer one ends the connection (stdio) or fails the exchange (HTTP).
inline constexpr size_t kMaxMessageBytes = size_t{64} << 20;

/// Parses one incoming message with mlsb::parse_json_limited (nesting at most mlsb::kMaxJsonDepth). For a
/// malformed one returns nullopt and sets `problem` to what is wrong plus an excerpt, worded to follow
/// "... that ": "is not JSON: <excerpt>" or "nests JSON deeper than 512 levels: <excerpt>".
std::optional<nlohmann::json> parse_message(std::string_view text, std::string& problem);

/// The first 300 bytes of `text` plus "..." when cut: how messages quote what a server sent.
std::string excerpt(std::string_view text);
/// excerpt() of `value`'s compact dump.
std::string dump_excerpt(const nlohmann::json& value);

enum class Kind { request, notification, response, invalid };
/// What an incoming message is: a response has `result` or `error` and an id; a request has a string
/// `method` and an id; a notification has a `method` and no id.
Kind classify(const nlohmann::json& message);

}  // namespace mlsb::mcp::jsonrpc
