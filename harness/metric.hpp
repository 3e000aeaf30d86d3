#pragma once
// What a metric is: its name, unit and better direction. The one part of the workload API that reports
// and the store read (they never see State or Workload).
#include <string>
#include <string_view>

namespace mlsb {

/// Which direction of a metric is an improvement.
enum class Better { Lower, Higher };
std::string_view to_string(Better b);
/// Parses "lower"/"higher"; throws std::invalid_argument.
Better parse_better(std::string_view text);

/// One metric a workload records. Names are a stable vocabulary (reports and compare key on them).
struct Metric {
  std::string name;
  std::string unit;  ///< "ms", "GB/s", "TFLOP/s", "ratio", "tasks/s", ...: the fixed set and the name-suffix rules
                     ///< are in tests/unit/harness/metric_vocabulary_test.cpp
  Better better = Better::Lower;
  std::string help;
  /// The same code on the same input gives the same value to the last digit (a counted instruction, not a
  /// time): compare and history judge it by the threshold alone, and two runs of one commit that differ are a
  /// determinism defect of the case, never better or worse.
  bool deterministic = false;
};

}  // namespace mlsb
