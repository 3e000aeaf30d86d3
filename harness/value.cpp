#include "harness/value.hpp"

#include <charconv>
#include <stdexcept>

namespace mlsb {

std::string_view to_string(AxisType type) {
  switch (type) {
    case AxisType::Int: return "int";
    case AxisType::Float: return "float";
    case AxisType::String: return "string";
  }
  return "?";
}

std::string to_string(const Value& v) {
  if (const auto* i = std::get_if<int64_t>(&v)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&v)) {
    char buf[32];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, *d);
    return std::string(buf, end);
  }
  return std::get<std::string>(v);
}

Value parse_value(AxisType type, std::string_view text, std::string_view axis) {
  auto bad = [&](std::string_view what) {
    return std::invalid_argument("axis '" + std::string(axis) + "': '" + std::string(text) + "' is not " +
                                 std::string(what));
  };
  switch (type) {
    case AxisType::Int: {
      int64_t v = 0;
      auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
      if (ec != std::errc() || end != text.data() + text.size() || text.empty()) throw bad("an integer");
      return v;
    }
    case AxisType::Float: {
      double v = 0;
      auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
      if (ec != std::errc() || end != text.data() + text.size() || text.empty()) throw bad("a number");
      return v;
    }
    case AxisType::String:
      return std::string(text);
  }
  throw bad("a known type");
}

nlohmann::json to_json(const Value& v) {
  return std::visit([](const auto& x) { return nlohmann::json(x); }, v);
}

nlohmann::json to_json(const Params& p) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [k, v] : p) j[k] = to_json(v);
  return j;
}

std::string params_key(const Params& p) {
  std::string key;
  for (const auto& [k, v] : p) {
    if (!key.empty()) key += ',';
    key += k + "=" + to_string(v);
  }
  return key;
}

}  // namespace mlsb
