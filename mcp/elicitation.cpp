#include "mcp/elicitation.hpp"

namespace mlsb::mcp {

nlohmann::json accept_with_defaults(const nlohmann::json& params) {
  nlohmann::json content = nlohmann::json::object();
  const nlohmann::json schema = params.is_object() ? params.value("requestedSchema", nlohmann::json()) : nlohmann::json();
  const nlohmann::json properties = schema.is_object() ? schema.value("properties", nlohmann::json()) : nlohmann::json();
  if (properties.is_object())
    for (const auto& [name, property] : properties.items())
      if (property.is_object() && property.contains("default")) content[name] = property["default"];
  return {{"action", "accept"}, {"content", std::move(content)}};
}

}  // namespace mlsb::mcp
