#pragma once
// Importing a run from our own JSON report (schema "mlsysbench.report/1", reports/REPORT_SCHEMA.md), samples
// included, so that a run measured elsewhere (a CI runner's artifact) can be reported and compared here.
#include <cstdint>
#include <filesystem>

#include "reports/model.hpp"
#include "reports/store.hpp"

namespace mlsb::reports {

/// Reads a JSON report as the run it was rendered from: the run's uuid, suite, status, times (unix s), argv,
/// seed, tags, git sha and dirty flag, env, machine_key, branch and ci, and every case (in order) with its
/// workload, params, params_key, label, backend, comm, ranks, status, reason, primary metric, times, gpu,
/// throttled, samples and items. Summaries are recomputed from the samples with mlsb::summarize, with the unit
/// and direction of the report's summaries, in metric name order (as the runner stores them); the report's
/// statistics are not read. The bootstrap CI (ci_lo, ci_hi) uses summarize's default seed, so for a run measured
/// by the runner (which seeds it per case) it may differ from the report's by resampling noise. Ids are 0 (the
/// store assigns them); "name" and "id" are ignored. machine_key, branch, ci, gpu and throttled, added within
/// /1, may be absent ("", {}, false). Unknown fields are ignored.
/// Throws JsonFileError (util/json_file.hpp) when the file cannot be read or is not JSON, and
/// std::invalid_argument naming the file and the field (e.g. "r.json: cases[2].samples.time_ms[3]: expected a
/// number, got null") when the schema is not "mlsysbench.report/1" (saying which it is), a field is missing or
/// of the wrong type, a status is not one the store knows, or a summary's metric has no samples.
RunData read_json_report(const std::filesystem::path& file);

/// Stores `data` as one run with its uuid, status and times as they are (no finish time is set); fills
/// data.run.id and each case's id and returns the run id. Throws std::invalid_argument, having written
/// nothing, when `store` already holds a run with that uuid (importing twice). When a write fails (StoreError)
/// the part already written is deleted again before the error propagates.
int64_t store_imported_run(Store& store, RunData& data);

}  // namespace mlsb::reports
