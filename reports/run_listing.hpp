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

/// A run's commit: the first 10 hex digits of its git sha, "+dirty" when the tree had changes; "-" without one.
std::string git_label(const RunRecord& r);

/// One line naming a run where it came from: "3f2a9c1e (id 7, smoke): git 1a2b3c4d5e on main, 2026-12-06
/// 02:00:00 UTC, machine 9f8e7d6c" (the parts it does not know are left out).
std::string run_line(const RunRecord& r);

}  // namespace mlsb::reports
