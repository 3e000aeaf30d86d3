#include "mcp/transport_factory.hpp"

#include "mcp/http_transport.hpp"
#include "mcp/sse_transport.hpp"
#include "mcp/stdio_transport.hpp"

namespace mlsb::mcp {

std::unique_ptr<Transport> make_transport(const ServerSpec& spec) {
  const std::string kind = !spec.transport.empty() ? spec.transport : !spec.command.empty() ? "stdio" : "http";
  if (kind == "stdio") return std::make_unique<StdioTransport>(spec);
  if (kind == "http") return std::make_unique<HttpTransport>(spec);
  if (kind == "sse") return std::make_unique<SseTransport>(spec);
  throw McpError("server '" + spec.name + "': unknown transport '" + spec.transport +
                 "' (expected stdio, http or sse)");
}

}  // namespace mlsb::mcp
