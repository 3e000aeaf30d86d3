#pragma once
// Answers to a server's elicitation/create request (MCP 2025-06-18 "Elicitation") for clients with no
// person to ask: a benchmark agent accepts with the defaults the server proposed.
#include <nlohmann/json.hpp>

namespace mlsb::mcp {

/// The result of elicitation/create `params`: {"action": "accept", "content": {...}} where content holds,
/// for every property of params.requestedSchema that carries a `default`, that default (SEP-1034:
/// the client applies the schema's defaults to fields it does not fill). Properties without a default
/// are left out; a missing or non-object schema gives empty content.
nlohmann::json accept_with_defaults(const nlohmann::json& params);

}  // namespace mlsb::mcp
