#pragma once
// Series a workload stores as items keyed "series/<name>/<index>" with {"x": number, "y": number}
// (a training loss curve, say): collected per case for the reports' line charts.
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "reports/model.hpp"

namespace mlsb::reports::detail {

/// Series name -> points in item order; items with a non-numeric x or y are skipped.
std::map<std::string, std::vector<std::pair<double, double>>> collect_series(const CaseRecord& c);

}  // namespace mlsb::reports::detail
