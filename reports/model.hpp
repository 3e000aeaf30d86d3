#pragma once
// What the results store holds: runs, their cases, samples, summaries and items.
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "util/stats.hpp"
#include "harness/metric.hpp"
#include "reports/status.hpp"

namespace mlsb::reports {

/// One metric's summary within a case, with the unit and direction declared by the workload.
struct SummaryRow {
  std::string metric;
  std::string unit;
  Better better = Better::Lower;
  Summary stats;
  bool deterministic = false;  ///< the metric repeats to the last digit (Metric::deterministic)
};

/// One case's outcome.
struct CaseRecord {
  int64_t id = 0;  ///< assigned by the store
  int64_t run_id = 0;  ///< the run it belongs to (set by Store::load_run; 0 for a case not read from a store)
  std::string workload;
  nlohmann::json params = nlohmann::json::object();  ///< {"axis": value}
  std::string params_key;                             ///< canonical "a=1,b=x"
  std::string label;  ///< short display name: the params that differ from the axis defaults ("" = all defaults)
  std::string backend = "cpu";
  std::string comm = "local";
  int ranks = 1;
  CaseStatus status = CaseStatus::Running;
  std::string reason;
  std::string primary_metric;
  double started_at = 0;   ///< unix seconds
  double finished_at = 0;  ///< unix seconds
  /// GPU state read through NVML before and after the case ({} without NVML or a GPU):
  /// {"before": [GpuState...], "after": [...], "throttle_reasons": [...]} (backends/cuda/gpu_state.hpp).
  nlohmann::json gpu = nlohmann::json::object();
  /// The GPU throttled during the case (a throttle reason other than idle, or the SM clock below 75% of
  /// its default): its comparison verdict is "noisy", never "worse".
  bool throttled = false;
  std::map<std::string, std::vector<double>> samples;  ///< metric -> values in sample order
  std::vector<SummaryRow> summaries;
  std::vector<std::pair<std::string, nlohmann::json>> items;  ///< (key, detail)
};

/// One run.
struct RunRecord {
  int64_t id = 0;  ///< assigned by the store
  std::string uuid;
  std::string suite;
  RunStatus status = RunStatus::Running;
  std::string argv;
  std::vector<std::string> tags;
  uint64_t seed = 0;
  std::string git_sha;
  bool git_dirty = false;
  double started_at = 0;
  double finished_at = 0;
  nlohmann::json env = nlohmann::json::object();
  /// Hash of the hardware and build the run ran on (harness/machine_key.hpp); "" for runs stored before
  /// schema 2, which match no other run's machine.
  std::string machine_key;
  std::string branch;  ///< git branch (or --branch); "" when unknown
  /// CI metadata when present: {"run_id", "runner", "ref", "sha", "workflow", "repository"} (GitHub Actions).
  nlohmann::json ci = nlohmann::json::object();
  int64_t pid = 0;     ///< the process that ran it (0: unknown, runs stored before schema 3 or imported)
  std::string host;    ///< the host that process ran on
  std::string reason;  ///< why the run ended as it did, when not plain (a process gone while running)
  /// What the run was told beyond its suite: {"filter": RE or "", "params": {axis: [values]} (the -p
  /// overrides), "runner": {"repetitions", "warmup", "max_time_s", "timeout_s": the runner options given,
  /// null where not}}. {} for runs stored before schema 4 (unknown: they match any selection).
  nlohmann::json selection = nlohmann::json::object();
  /// The run holds only some of its plan's cases (made with --filter, or a confirming re-run): never a
  /// reference for a later run (reports/baseline.hpp).
  bool partial = false;
  /// Why the run is suspect ("" = it is not): a nightly whose "worse" its confirming re-run did not
  /// reproduce. A suspect run is kept and shown but is no reference; its confirming re-run stands in for it.
  std::string suspect;
  /// The uuid of the run this one re-ran to confirm a regression (`run --confirms`); "" for other runs.
  std::string confirms;
};

struct RunData {
  RunRecord run;
  std::vector<CaseRecord> cases;
};

/// One metric's summary of one ok case of a run (Store::load_metric_points): a point of a history.
struct MetricPoint {
  int64_t run_id = 0;
  int64_t case_id = 0;
  std::string workload, params_key, label, backend, comm, primary_metric;
  int ranks = 1;
  bool throttled = false;
  std::string metric, unit;
  Better better = Better::Lower;
  bool deterministic = false;
  int64_t n = 0;
  double median = 0, ci_lo = 0, ci_hi = 0;
};

/// A run's case counts by status: ok, failed (status "failed" or "timeout") and other (skipped, interrupted).
struct CaseCounts {
  int64_t ok = 0, failed = 0, other = 0;
};

/// A run with its case counts, as `db ls` lists it (Store::list_run_summaries).
struct RunSummary {
  RunRecord run;
  CaseCounts cases;
};

}  // namespace mlsb::reports
