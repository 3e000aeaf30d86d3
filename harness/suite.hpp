#pragma once
// Named suites: JSON files listing workloads, axis values and runner settings.
//
// Format (workloads/suites/NAME.json):
//   {"name": "smoke", "description": "...",
//    "runner": {"warmup": 0, "min_samples": 3, ...},           // optional, for every entry
//    "cases": [{"workload": "toolbench",
//               "params": {"agent": "oracle", "trials": [1, 3]},  // a value or a list of values
//               "runner": {...},                                  // optional, for this entry
//               "expected_s": 20}]}                               // optional, see SuiteEntry
// Runner keys: warmup, min_samples, max_samples, min_time_s, max_noise, max_time_s, timeout_s, min_sample_s.
// String values may use ${source_dir} (the project root) and ${shared_dir} (MLSB_SHARED_DIR, else
// the `shared` folder beside the project root).
#include <filesystem>
#include <string>
#include <vector>

#include "harness/plan.hpp"

namespace mlsb {

struct SuiteEntry {
  std::string workload;
  std::map<std::string, std::vector<std::string>> params;  ///< axis -> values as text
  RunnerOverrides runner;
  /// Seconds each case of the entry takes on the machine the suite was written on (say which in its
  /// description): the progress line's ETA scales them by how this machine compares on the cases that
  /// finished, before the store has times of its own. -1: not given.
  double expected_s = -1;
  /// "time", "instructions" (counted under callgrind), or "" for the suite's own (Suite::measure): the
  /// entry's key "measure".
  std::string measure;
};

struct Suite {
  std::string name;
  std::string description;
  std::filesystem::path file;
  std::vector<SuiteEntry> entries;
  /// What the suite measures: "time" (the workloads' own metrics) or "instructions" (counted under
  /// callgrind: harness/callgrind.hpp); the key "measure", which an entry may set for its own cases.
  std::string measure = "time";
};

/// Loads and validates a suite file: JSON syntax, known keys, known workloads and axes, value types
/// and choices. Throws std::invalid_argument naming the file and the offending key path
/// (e.g. "suites/x.json: cases[1].params.trials: ...").
Suite load_suite(const std::filesystem::path& file);

/// Suite files found in `dirs` (*.json), sorted by name.
std::vector<std::filesystem::path> find_suites(const std::vector<std::filesystem::path>& dirs);

/// The default suite folders: $MLSB_SUITES_DIR if set, then <source_dir>/workloads/suites.
std::vector<std::filesystem::path> default_suite_dirs();

/// Expands ${source_dir} and ${shared_dir} in `text`.
std::string expand_placeholders(const std::string& text);

}  // namespace mlsb
