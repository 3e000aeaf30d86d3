#pragma once
// Typed axis values: the cells of a workload's parameter space.
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <variant>

#include <nlohmann/json.hpp>

namespace mlsb {

/// Value types an axis may take.
enum class AxisType { Int, Float, String };

/// One axis value. Int is int64, Float is double, String is UTF-8 text.
using Value = std::variant<int64_t, double, std::string>;

/// One case's parameters: axis name -> value, ordered by name (so iteration is canonical).
using Params = std::map<std::string, Value>;

/// "int", "float" or "string".
std::string_view to_string(AxisType type);

/// Text form of a value: integers in decimal, floats in shortest round-trip form, strings as is.
std::string to_string(const Value& v);

/// Parses `text` as a value of `type` for the axis named `axis`.
/// Throws std::invalid_argument naming the axis, the text and the expected type.
Value parse_value(AxisType type, std::string_view text, std::string_view axis);

/// JSON form of a value (number or string).
nlohmann::json to_json(const Value& v);

/// JSON object of params: {"axis": value, ...}.
nlohmann::json to_json(const Params& p);

/// Canonical key of params: "a=1,b=x" in axis-name order; equal params give equal keys.
std::string params_key(const Params& p);

}  // namespace mlsb
