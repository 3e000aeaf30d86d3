#pragma once
// Serving a ToolServer over stdio (MCP "stdio" transport): newline-delimited JSON-RPC messages on
// standard input, responses on standard output, one per line.
#include <atomic>

#include "mcp/tool_server/tool_server.hpp"

namespace mlsb::mcp {

/// Serves until standard input ends or `stop` is set (checked between messages). Standard output is
/// kept for the protocol alone: anything else the process writes to it (a library's printf) goes to
/// standard error. A line that is not JSON gets a -32700 response with a null id; one over
/// jsonrpc::kMaxMessageBytes is answered the same way and skipped. Requests are handled one at a time.
/// Returns 0 (input ended) or 130 (stopped).
int serve_stdio(ToolServer& server, const std::atomic<bool>& stop);

}  // namespace mlsb::mcp
