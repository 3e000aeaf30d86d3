#include "reports/case_names.hpp"

#include <map>

namespace mlsb::reports {
namespace {

std::string joined(const std::string& workload, const std::string& rest) {
  return rest.empty() ? workload : workload + "/" + rest;
}

}  // namespace

std::string params_name(const CaseRecord& c) { return joined(c.workload, c.params_key); }

std::vector<std::string> case_display_names(const std::vector<CaseRecord>& cases) {
  std::vector<std::string> names;
  names.reserve(cases.size());
  std::map<std::string, int> uses;
  for (const auto& c : cases) ++uses[names.emplace_back(joined(c.workload, c.label))];
  for (size_t i = 0; i < cases.size(); ++i)
    if (uses[names[i]] > 1) names[i] = params_name(cases[i]);
  return names;
}

}  // namespace mlsb::reports
