#include "reports/detail/series_items.hpp"

#include <map>

namespace mlsb::reports::detail {
namespace {

std::string string_field(const nlohmann::json& item, const char* field) {
  const auto it = item.find(field);
  return it != item.end() && it->is_string() ? it->get<std::string>() : "";
}

void apply_chart_item(SeriesChart& s, const nlohmann::json& item) {
  if (const std::string x = string_field(item, "x_label"); !x.empty()) s.x_label = x;
  if (const std::string y = string_field(item, "y_label"); !y.empty()) s.y_label = y;
  if (const std::string c = string_field(item, "caption"); !c.empty()) s.caption = c;
  s.options.columns = string_field(item, "kind") == "columns";
  const auto marks = item.find("marks");
  if (marks == item.end() || !marks->is_array()) return;
  for (const auto& m : *marks)
    if (m.is_object() && m.contains("y") && m["y"].is_number())
      s.options.marks.push_back({m["y"].get<double>(), string_field(m, "label")});
}

}  // namespace

std::vector<SeriesChart> collect_series(const CaseRecord& c) {
  std::map<std::string, SeriesChart> by_name;
  std::map<std::string, const nlohmann::json*> chart_items;
  static const std::string series = "series/", chart = "chart/";
  for (const auto& [key, item] : c.items) {
    if (!item.is_object()) continue;
    if (key.rfind(chart, 0) == 0) {
      chart_items[key.substr(chart.size())] = &item;
      continue;
    }
    if (key.rfind(series, 0) != 0) continue;
    const size_t slash = key.find('/', series.size());
    if (slash == std::string::npos) continue;
    const auto x = item.find("x"), y = item.find("y");
    if (x == item.end() || y == item.end() || !x->is_number() || !y->is_number()) continue;
    by_name[key.substr(series.size(), slash - series.size())].points.emplace_back(x->get<double>(), y->get<double>());
  }
  std::vector<SeriesChart> out;
  for (auto& [name, s] : by_name) {
    s.name = s.y_label = name;
    if (const auto it = chart_items.find(name); it != chart_items.end()) apply_chart_item(s, *it->second);
    if (s.caption.empty()) s.caption = s.y_label;
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace mlsb::reports::detail
