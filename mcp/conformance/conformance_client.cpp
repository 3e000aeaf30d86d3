// The client under test for `conformance client --command ...` (@modelcontextprotocol/conformance):
// the framework appends the server URL and names the scenario in $MCP_CONFORMANCE_SCENARIO. Whatever
// the scenario, it does what a benchmark agent's client does: connect over Streamable HTTP (initialize
// with version negotiation), list the tools, call each one with arguments made from its input schema,
// accept elicitations with the schema's defaults, and close the session. Exit 0 when every step
// worked, 1 with the error on stderr otherwise, 2 for bad usage.
#include <cstdlib>
#include <iostream>

#include "mcp/client.hpp"
#include "mcp/elicitation.hpp"

namespace {

using nlohmann::json;

// A value for a property of JSON-Schema type `type`: numbers 1, 2, 3... (distinct, so a sum shows
// which went where), strings "test", booleans true, arrays and objects empty.
json sample_value(const json& property, int& counter) {
  if (property.contains("default")) return property["default"];
  if (property.contains("enum") && property["enum"].is_array() && !property["enum"].empty()) return property["enum"][0];
  const std::string type = property.value("type", json("string")).is_string() ? property.value("type", "string") : "string";
  if (type == "number" || type == "integer") return ++counter;
  if (type == "boolean") return true;
  if (type == "array") return json::array();
  if (type == "object") return json::object();
  return "test";
}

// Arguments for every required property of an object schema.
json arguments_for(const json& schema) {
  json args = json::object();
  int counter = 0;
  const json properties = schema.value("properties", json::object());
  for (const auto& name : schema.value("required", json::array()))
    if (name.is_string() && properties.contains(name.get<std::string>()))
      args[name.get<std::string>()] = sample_value(properties[name.get<std::string>()], counter);
  return args;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: mlsb_conformance_client URL  (as `conformance client --command` runs it)\n";
    return 2;
  }
  const char* scenario = std::getenv("MCP_CONFORMANCE_SCENARIO");
  mlsb::mcp::ServerSpec spec;
  spec.name = scenario ? scenario : "conformance";
  spec.url = argv[argc - 1];
  spec.transport = "http";
  mlsb::mcp::ClientOptions options;
  options.on_elicitation = mlsb::mcp::accept_with_defaults;
  options.request_timeout = std::chrono::seconds(20);
  try {
    auto client = mlsb::mcp::Client::connect(spec, options);
    std::cout << "initialized: protocol " << client->protocol_version() << ", server " << client->server_info().dump() << "\n";
    for (const auto& tool : client->list_tools()) {
      const json args = arguments_for(tool.input_schema);
      const auto result = client->call_tool(tool.name, args);
      std::cout << "called " << tool.name << args.dump() << ": " << (result.is_error ? "isError: " : "") << result.text() << "\n";
    }
    client->close();
  } catch (const std::exception& e) {
    std::cerr << "mlsb_conformance_client: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
