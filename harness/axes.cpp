#include "harness/axes.hpp"

#include <algorithm>
#include <stdexcept>

#include "harness/suite.hpp"

namespace mlsb {

Axis int_axis(std::string name, std::vector<int64_t> defaults, std::string help, double min, double max) {
  Axis a;
  a.name = std::move(name);
  a.type = AxisType::Int;
  a.defaults.assign(defaults.begin(), defaults.end());
  a.help = std::move(help);
  a.min = min;
  a.max = max;
  return a;
}

Axis float_axis(std::string name, std::vector<double> defaults, std::string help, double min, double max) {
  Axis a;
  a.name = std::move(name);
  a.type = AxisType::Float;
  a.defaults.assign(defaults.begin(), defaults.end());
  a.help = std::move(help);
  a.min = min;
  a.max = max;
  return a;
}

Axis string_axis(std::string name, std::vector<std::string> defaults, std::string help,
                 std::vector<std::string> choices) {
  Axis a;
  a.name = std::move(name);
  a.type = AxisType::String;
  a.defaults.assign(defaults.begin(), defaults.end());
  a.help = std::move(help);
  a.choices = std::move(choices);
  return a;
}

Axis path_axis(std::string name, std::string def, std::string help, std::vector<std::string> keywords) {
  Axis a = string_axis(std::move(name), {std::move(def)}, std::move(help), std::move(keywords));
  a.path = true;
  return a;
}

Axis data_axis(Axis axis) {
  axis.data = true;
  return axis;
}

Axis applies_when(Axis axis, std::string other, std::vector<std::string> values) {
  axis.applies_if = std::move(other);
  axis.applies_if_values = std::move(values);
  return axis;
}

std::filesystem::path input_path(const State& state, const char* axis) {
  return expand_placeholders(state.get_string(axis));
}

std::vector<Metric> select_metrics(const std::vector<Metric>& vocabulary,
                                   std::initializer_list<std::string_view> names) {
  std::vector<Metric> out;
  for (const auto name : names) {
    const auto it = std::find_if(vocabulary.begin(), vocabulary.end(), [&](const Metric& m) { return m.name == name; });
    if (it == vocabulary.end()) throw std::logic_error("no metric '" + std::string(name) + "' in the vocabulary");
    out.push_back(*it);
  }
  return out;
}

}  // namespace mlsb
