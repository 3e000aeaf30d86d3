#pragma once
// MCP tools as chat-API tools: names made valid for the APIs and mapped back, schemas made objects.
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "workloads/toolbench/task.hpp"

namespace mlsb::toolbench {

/// A tool as offered to a chat API.
struct ApiTool {
  std::string name;         ///< valid for the APIs: [A-Za-z0-9_-]{1,64}
  std::string mcp_name;     ///< the MCP tool's own name
  std::string description;
  nlohmann::json parameters;  ///< a JSON-Schema object schema
};

/// The tools of a prompt for a chat API. Both APIs take names matching ^[a-zA-Z0-9_-]{1,64}$
/// (OpenAI function names, Anthropic tool names): every other byte becomes '_', a name is cut to 64
/// bytes, an empty one becomes "tool", and a name already taken gets "_2", "_3", ... (within 64
/// bytes). MCPToolBench++'s `input_schema` (MCP's `inputSchema`) becomes `parameters`: a schema that is
/// not an object becomes {"type":"object","properties":{}}, one without a type gets "type":"object".
std::vector<ApiTool> api_tools(const std::vector<ToolSpec>& tools);

/// The MCP name of an API name the model used; a name that is not among `tools` is returned as is
/// (the runner then finds no server for it, and the call is a miss).
std::string mcp_name_of(const std::vector<ApiTool>& tools, const std::string& api_name);

}  // namespace mlsb::toolbench
