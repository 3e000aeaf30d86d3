#pragma once
// Running one toolbench case through the Workload API the way the runner does, for the integration
// tests (real State, fixture copies, MCP servers).
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/value.hpp"

namespace mlsb::test {

struct CaseResult {
  std::string failure;  ///< the FailCase message from setup or verify; "" = the case is ok
  std::vector<std::string> warnings;
  std::pair<int64_t, int64_t> progress;  ///< task trials done, of total, after the sample
  std::map<std::string, std::vector<double>> samples;
  std::vector<std::pair<std::string, nlohmann::json>> items;
  double metric(const std::string& m) const { return samples.at(m).at(0); }
};

/// Runs one toolbench case (defaults overridden by `overrides`): setup, one sample, verify, teardown.
/// A FailCase from setup or verify ends it and is kept in `failure` (the items are kept as the runner
/// keeps them).
CaseResult run_toolbench_case(const std::map<std::string, Value>& overrides);

}  // namespace mlsb::test
