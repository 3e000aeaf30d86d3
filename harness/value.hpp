#pragma once
// Typed axis values: the cells of a workload's parameter space.
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

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

/// Parses `text` as a value of `type` for the axis named `axis`. An Int may carry a binary size suffix,
/// as nccl-tests' sizes do: K or Ki (2^10), M or Mi (2^20), G or Gi (2^30), T or Ti (2^40): "64Ki",
/// "1M". Throws std::invalid_argument naming the axis, the text and the expected type (or an overflow).
Value parse_value(AxisType type, std::string_view text, std::string_view axis);

/// The values `text` names: one value, or for an Int axis a range "START:END:*F" (START, START*F, ...
/// up to END; F >= 2) or "START:END:+S" (START, START+S, ...; S >= 1), ends included when reached, at
/// most 10,000 values: "-p elements=1K:1G:*2". Throws std::invalid_argument naming the axis for a bad
/// range.
std::vector<Value> parse_values(AxisType type, std::string_view text, std::string_view axis);

/// JSON form of a value (number or string).
nlohmann::json to_json(const Value& v);

/// JSON object of params: {"axis": value, ...}.
nlohmann::json to_json(const Params& p);

/// Canonical key of params: "a=1,b=x" in axis-name order; equal params give equal keys.
std::string params_key(const Params& p);

}  // namespace mlsb
