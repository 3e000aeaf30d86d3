#pragma once
// Importing Google Benchmark results (a binary run with --benchmark_out=F --benchmark_out_format=json)
// into the store, so microbenchmarks sit beside suite runs in reports and compare.
#include <filesystem>

#include "reports/model.hpp"

namespace mlsb::reports {

/// Reads a Google Benchmark JSON file as a run (suite "gbench:<executable>", env = the file's context):
/// one case per benchmark (workload "gbench", params {"benchmark": run_name}); one sample per
/// "iteration" entry (its repetitions); metrics real_time_ms and cpu_time_ms (primary: real_time_ms;
/// time_unit converted), bytes_per_second as gbps (GB/s), items_per_second, and each user counter as
/// it is (better: higher). Aggregate entries are not imported (summaries are recomputed from the
/// samples). An entry with error_occurred makes its case failed with the message; a skipped entry
/// (Google Benchmark >= 1.8 "skipped") makes it skipped. Throws std::invalid_argument naming the file
/// and the entry/field when the file is not Google Benchmark JSON.
RunData import_gbench(const std::filesystem::path& file);

}  // namespace mlsb::reports
