#include "reports/case_names.hpp"

#include <functional>
#include <map>

namespace mlsb::reports {
namespace {

std::string joined(const std::string& workload, const std::string& rest) {
  return rest.empty() ? workload : workload + "/" + rest;
}

// Renames, with rename(i), each case i whose name another case shares.
void split_collisions(std::vector<std::string>& names, const std::function<std::string(size_t)>& rename) {
  std::map<std::string, int> uses;
  for (const auto& n : names) ++uses[n];
  for (size_t i = 0; i < names.size(); ++i)
    if (uses[names[i]] > 1) names[i] = rename(i);
}

}  // namespace

std::string params_name(const CaseRecord& c) { return joined(c.workload, c.params_key); }

std::vector<std::string> case_display_names(const std::vector<CaseRecord>& cases) {
  std::vector<std::string> names;
  names.reserve(cases.size());
  for (const auto& c : cases) names.push_back(joined(c.workload, c.label));
  split_collisions(names, [&](size_t i) { return params_name(cases[i]); });
  split_collisions(names, [&](size_t i) {
    const CaseRecord& c = cases[i];
    return names[i] + " [" + c.backend + ", " + c.comm + " x" + std::to_string(c.ranks) + "]";
  });
  std::map<std::string, int> seen;
  split_collisions(names, [&](size_t i) { return names[i] + " #" + std::to_string(++seen[names[i]]); });
  return names;
}

}  // namespace mlsb::reports
