#pragma once
// How reports and comparisons name a case for people: "workload/label" instead of the full params_key.
#include <string>
#include <vector>

#include "reports/model.hpp"

namespace mlsb::reports {

/// "workload/params_key", or "workload" alone when params_key is empty: the name that identifies a case.
std::string params_name(const CaseRecord& c);

/// The display name of each case, in order: "workload/label" ("workload" alone when the label is empty).
/// The names are unique: cases whose display names would collide fall back to params_name; cases that
/// still collide (same workload and params) get their placement appended, " [cpu, mpi x4]", and cases
/// identical in that too (a suite listing a case twice) " #1", " #2"... in run order.
std::vector<std::string> case_display_names(const std::vector<CaseRecord>& cases);

}  // namespace mlsb::reports
