#pragma once
// Names that used to be one workload with a mode axis and are now a family of benchmarks
// ("compress" with mode=plan is now "compress.plan"): runs, suites and stored results that use the old
// spelling keep working through an alias; and the name a stored case has in this build.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/plan.hpp"
#include "harness/registry.hpp"

namespace mlsb {

/// `name` with `axis` = value runs the benchmark `targets` maps that value to; without the axis, the
/// benchmark of `default_value`.
struct WorkloadAlias {
  std::string name;           ///< the old workload name, e.g. "compress"
  std::string axis;           ///< the old mode axis, e.g. "mode"
  std::string default_value;  ///< the axis's old default, e.g. "codec"
  std::vector<std::pair<std::string, std::string>> targets;  ///< axis value -> benchmark name
};

/// Registers an alias (for static initialisers); returns true.
bool register_alias(WorkloadAlias alias);
/// The alias registered under `name`, or nullptr.
const WorkloadAlias* find_alias(std::string_view name);

/// Every name `run` takes for a workload: the registered benchmarks and the aliases, sorted.
std::vector<std::string> runnable_names();

/// The family of a benchmark: its name up to the first '.' ("compress" for "compress.codec").
std::string workload_family(std::string_view name);

/// One workload entry with its axis values, as a suite or the command line gives them.
struct WorkloadEntry {
  std::string workload;
  AxisOverrides params;
};

/// `workload` and `params` with an alias resolved: one entry per benchmark the alias axis's values pick
/// (its default when not given), each with the given axes it has; a workload that is not an alias comes
/// back as it is. Throws std::invalid_argument for a value of the alias axis it does not map, or an axis
/// that none of the picked benchmarks has (naming the benchmarks that do).
std::vector<WorkloadEntry> resolve_alias(const std::string& workload, const AxisOverrides& params);

/// Renames a stored case to the name a run of this build gives it, so that runs stored by earlier builds
/// pair with new ones (in compare, history and baselines): a case stored under an alias moves to the
/// benchmark its alias axis picks, its params restricted to that benchmark's axes; an axis its benchmark
/// has now but the stored params lack (added since) takes its default, which is what the case ran (an axis
/// with several defaults stays absent: which one it ran is unknown). Then params_key and label are
/// recomputed as a run of this build names the case (the label keeps the axes the old one named). A case
/// of a workload this build does not know, of a mode it no longer has, or that lacks no axis, is left as
/// stored. The signature is reports::CaseRenamer's: the application installs it with set_case_renamer.
void rename_stored_case(std::string& workload, nlohmann::json& params, std::string& params_key, std::string& label);

}  // namespace mlsb

/// Registers a WorkloadAlias at static-initialisation time.
#define MLSB_REGISTER_ALIAS(...) \
  static const bool MLSB_CONCAT(mlsb_alias_, __COUNTER__) = ::mlsb::register_alias(::mlsb::WorkloadAlias __VA_ARGS__)
