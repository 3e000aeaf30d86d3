#pragma once
// A run plan: the list of cases a `run` executes, built from a workload or a suite plus CLI overrides.
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "harness/value.hpp"
#include "harness/workload.hpp"

namespace mlsb {

/// Runner settings that override a workload's RunnerDefaults; unset fields keep the default.
struct RunnerOverrides {
  std::optional<int> warmup, min_samples, max_samples;
  std::optional<double> min_time_s, max_noise, max_time_s, timeout_s, min_sample_s;

  /// Fields set here replace those of `base`.
  RunnerDefaults apply(RunnerDefaults base) const;
  /// Fields set in `over` replace those set here.
  RunnerOverrides merged(const RunnerOverrides& over) const;
  /// Exactly `n` measured samples (`--repetitions`): min = max = n, and no time limit cuts them short.
  void set_repetitions(int n);
};

/// One case to run.
struct CaseSpec {
  std::string workload;
  Params params;
  RunnerDefaults runner;  ///< effective settings after defaults, suite and CLI overrides
  std::string label;      ///< the params that differ from the axis defaults, "a=1,b=x" ("" = all defaults)
  double expected_s = -1;  ///< its suite entry's expected_s (SuiteEntry), unless -p changed its axes or
                           ///< runner options (--repetitions, ...) were given
  std::string measure = "time";  ///< "time" or "instructions": its entry's, else its suite's instrument

  /// "workload/params_key": what --filter matches and what seeds the case's RNG.
  std::string id() const;
  /// "workload/label", or "workload" when every axis is at its default: what people read.
  std::string display_name() const;
};

/// The params of `p` that were `given` (on the command line or in the suite: a value swept back to the
/// default stays named), differ from their axis's single default, or belong to an axis with several
/// defaults, as "a=1,b=x".
std::string case_label(const WorkloadInfo& info, const Params& p, const std::set<std::string>& given = {});

/// Makes a path-valued axis value independent of the checkout and the working directory: expands
/// ${source_dir}/${shared_dir}, resolves a relative path against the working directory (then the
/// project root), and rewrites a path under the project root or the shared folder with that
/// placeholder. Throws std::invalid_argument naming the axis when the path does not exist.
std::string canonical_path_value(const Axis& axis, const std::string& value);

/// Axis overrides from the CLI: axis name -> one or more values as text ("-p experts=8,64").
using AxisOverrides = std::map<std::string, std::vector<std::string>>;

/// Parses "-p name=v1,v2" strings into overrides; throws std::invalid_argument naming the bad one.
AxisOverrides parse_axis_overrides(const std::vector<std::string>& specs);

/// Cartesian product of `axes` values: each axis takes its override values if given (parsed and
/// validated against type and choices), else its defaults. An axis that does not apply to a case
/// (Axis::applies_if) takes its first default there, and the cases that then coincide are kept once, in
/// first-seen order. Throws std::invalid_argument naming the axis and its allowed values for a bad value.
std::vector<Params> expand_axes(const WorkloadInfo& info, const AxisOverrides& values);

/// Checks `value` against `axis` (type already parsed; a String axis with choices must use one).
/// Throws std::invalid_argument naming the axis and the allowed values.
void validate_value(const Axis& axis, const Value& value);

struct Plan {
  std::string suite;  ///< suite name, or the workload name for a single-workload run
  std::vector<CaseSpec> cases;
  /// What the user should know about the plan: a -p value (other than the default) for an axis that applies to
  /// none of the cases left after the filter (an axis that applies only under some values of another, such as
  /// accumulate under an fp8 or fp4 precision).
  std::vector<std::string> warnings;
  /// Sets every case's instrument (`run --measure`), in place of its suite entry's or suite's.
  void set_measure(const std::string& m);
  /// How many cases are counted (measure "instructions").
  size_t counted() const;
};

/// Builds the plan for `target`: a suite name (searched in `suite_dirs`), a path to a suite file
/// (*.json), or a workload name. CLI `overrides` apply to every case whose workload has the axis
/// (an axis that no workload in the plan has is an error), then `runner` overrides, then `filter`
/// (ECMAScript regex searched in CaseSpec::id(); empty = all).
/// Throws std::invalid_argument with a message naming the target, file, axis or value at fault.
Plan build_plan(std::string_view target, const std::vector<std::filesystem::path>& suite_dirs,
                const AxisOverrides& overrides, const RunnerOverrides& runner, const std::string& filter);

}  // namespace mlsb
