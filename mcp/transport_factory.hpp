#pragma once
// Chooses the transport a ServerSpec asks for.
#include <memory>

#include "mcp/client.hpp"
#include "mcp/transport.hpp"

namespace mlsb::mcp {

/// stdio when `transport` is "stdio" (or empty with a command), Streamable HTTP for "http" (or empty with a
/// url), legacy HTTP+SSE for "sse". Throws McpError for an unknown transport, a missing command or url,
/// or a stdio command that is not found.
std::unique_ptr<Transport> make_transport(const ServerSpec& spec);

}  // namespace mlsb::mcp
