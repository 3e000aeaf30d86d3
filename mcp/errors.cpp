#include "mcp/client.hpp"

namespace mlsb::mcp {

RpcError::RpcError(int code_, std::string message, nlohmann::json data_)
    : McpError(message), code(code_), data(std::move(data_)) {}

}  // namespace mlsb::mcp
