#include "reports/detail/series_items.hpp"

namespace mlsb::reports::detail {

std::map<std::string, std::vector<std::pair<double, double>>> collect_series(const CaseRecord& c) {
  std::map<std::string, std::vector<std::pair<double, double>>> out;
  static const std::string prefix = "series/";
  for (const auto& [key, item] : c.items) {
    if (key.rfind(prefix, 0) != 0) continue;
    const size_t slash = key.find('/', prefix.size());
    if (slash == std::string::npos || !item.is_object()) continue;
    const auto x = item.find("x"), y = item.find("y");
    if (x == item.end() || y == item.end() || !x->is_number() || !y->is_number()) continue;
    out[key.substr(prefix.size(), slash - prefix.size())].emplace_back(x->get<double>(), y->get<double>());
  }
  return out;
}

}  // namespace mlsb::reports::detail
