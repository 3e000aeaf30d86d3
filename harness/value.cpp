#include "harness/value.hpp"

#include <charconv>
#include <cstdint>
#include <stdexcept>

#include "util/text.hpp"

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
  if (const auto* d = std::get_if<double>(&v)) return shortest(*d);
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
      if (ec != std::errc() || text.empty()) throw bad("an integer");
      std::string_view suffix(end, static_cast<size_t>(text.data() + text.size() - end));
      if (suffix.ends_with('i')) suffix.remove_suffix(1);
      if (suffix.empty() && end != text.data() + text.size()) throw bad("an integer");  // a bare "i"
      int shift = 0;
      if (suffix == "K") shift = 10;
      else if (suffix == "M") shift = 20;
      else if (suffix == "G") shift = 30;
      else if (suffix == "T") shift = 40;
      else if (!suffix.empty()) throw bad("an integer (size suffixes: K, M, G, T, or Ki, Mi, Gi, Ti)");
      if (shift && (v > (INT64_MAX >> shift) || v < (INT64_MIN >> shift))) throw bad("a 64-bit integer");
      return v * (int64_t{1} << shift);
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

std::vector<Value> parse_values(AxisType type, std::string_view text, std::string_view axis) {
  const size_t c1 = text.find(':');
  if (type != AxisType::Int || c1 == std::string_view::npos) return {parse_value(type, text, axis)};
  const auto bad = [&](const std::string& why) {
    return std::invalid_argument("axis '" + std::string(axis) + "': range '" + std::string(text) + "' " + why +
                                 " (ranges: START:END:*FACTOR or START:END:+STEP, e.g. 1K:1M:*2)");
  };
  const size_t c2 = text.find(':', c1 + 1);
  if (c2 == std::string_view::npos || c2 + 1 >= text.size()) throw bad("needs a step");
  const std::string_view step = text.substr(c2 + 2);
  const bool geometric = text[c2 + 1] == '*';
  if (!geometric && text[c2 + 1] != '+') throw bad("needs a step *FACTOR or +STEP");
  const int64_t start = std::get<int64_t>(parse_value(type, text.substr(0, c1), axis));
  const int64_t stop = std::get<int64_t>(parse_value(type, text.substr(c1 + 1, c2 - c1 - 1), axis));
  const int64_t by = std::get<int64_t>(parse_value(type, step, axis));
  if (start > stop) throw bad("starts after its end");
  if (geometric && (by < 2 || start < 1)) throw bad("needs a factor >= 2 and a start >= 1");
  if (!geometric && by < 1) throw bad("needs a step >= 1");
  constexpr size_t kMaxValues = 10'000;
  std::vector<Value> out;
  for (int64_t v = start; v <= stop;) {
    if (out.size() == kMaxValues) throw bad("has more than 10000 values");
    out.emplace_back(v);
    if (geometric ? v > stop / by : v > stop - by) break;  // the next value would pass the end (or overflow)
    v = geometric ? v * by : v + by;
  }
  return out;
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
