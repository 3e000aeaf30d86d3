#pragma once
// Plain-text listings of stored runs for `mlsysbench db ls` and `db show`.
#include <string>
#include <vector>

#include "reports/model.hpp"

namespace mlsb::reports {

/// One line per run: id, uuid prefix, started (UTC), duration (start to finish; "-" while running), status,
/// case counts (ok, failed incl. timed out, other), suite, git sha (+dirty), tags.
std::string format_run_list(const std::vector<RunSummary>& runs);

/// A run's metadata, its environment (JSON) and one line per case (status, primary metric, "throttled
/// (reasons)" when the case's GPU throttled, reason).
std::string format_run_detail(const RunData& run);

/// Unix seconds as "YYYY-MM-DD HH:MM:SS" UTC.
std::string format_utc(double unix_seconds);

}  // namespace mlsb::reports
