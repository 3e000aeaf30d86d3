// `history --detect` over a store of 1,000 runs x 100 cases x 5 metrics (500 series of 1,000 runs),
// beside its peer: a plain SQL scan of the same summary rows with the sqlite3 C API (the floor for
// reading them). Run: env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE taskset -c 0 build/reports/bench/bench_history
// The store is built once per process in $TMPDIR (about a minute).
#include <benchmark/benchmark.h>
#include <sqlite3.h>

#include <cstdlib>
#include <filesystem>

#include "reports/bench/synthetic_run.hpp"
#include "reports/history.hpp"

namespace {

namespace fs = std::filesystem;
using namespace mlsb::reports;

constexpr int kRuns = 1000, kCases = 100, kMetrics = 5, kSamples = 3;

const fs::path& store_path() {
  static const fs::path path = [] {
    const char* tmp = std::getenv("TMPDIR");
    fs::path p = fs::path(tmp && *tmp ? tmp : "/tmp") / "mlsb_bench_history.db";
    for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(p.string() + suffix);
    Store store(p);
    for (int r = 0; r < kRuns; ++r) {
      RunData run = bench::synthetic_run(kCases, kMetrics, kSamples, 0, static_cast<uint64_t>(r + 1));
      run.run.machine_key = "bench-machine";
      run.run.branch = "main";
      run.run.git_sha = std::to_string(r);
      store.begin_run(run.run);
      for (auto& c : run.cases) store.add_case(run.run.id, c);
      store.finish_run(run.run.id, RunStatus::Ok);
    }
    return p;
  }();
  return path;
}

void BM_HistoryDetect(benchmark::State& state) {
  Store store(store_path(), /*read_only=*/true);
  size_t series = 0, regressions = 0;
  for (auto _ : state) {
    History h = load_history(store, {.suite = "synthetic", .metric = "all"});
    detect_history(h, {});
    series = h.series.size();
    regressions = standing_regressions(h, /*primary_only=*/false).size();
    benchmark::DoNotOptimize(regressions);
  }
  state.counters["series"] = static_cast<double>(series);
  state.counters["standing_regressions"] = static_cast<double>(regressions);
}
BENCHMARK(BM_HistoryDetect)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);

// The loading part alone (the query and the series), to show where the time goes.
void BM_HistoryLoadOnly(benchmark::State& state) {
  Store store(store_path(), /*read_only=*/true);
  for (auto _ : state) benchmark::DoNotOptimize(load_history(store, {.suite = "synthetic", .metric = "all"}));
}
BENCHMARK(BM_HistoryLoadOnly)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);

// The peer: the same summary rows (every ok case's median per metric, all runs) read by one SQL scan.
void BM_SqlScanOfTheSameRows(benchmark::State& state) {
  store_path();
  sqlite3* db = nullptr;
  sqlite3_open_v2(store_path().c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  int64_t rows = 0;
  for (auto _ : state) {
    sqlite3_stmt* stmt = nullptr;
    sqlite3_prepare_v2(db,
                       "SELECT c.run_id, c.workload, c.params_key, s.metric, s.median, s.ci_lo, s.ci_hi FROM cases c "
                       "JOIN summaries s ON s.case_id = c.id WHERE c.status = 'ok' ORDER BY c.run_id, c.id, s.metric",
                       -1, &stmt, nullptr);
    rows = 0;
    double sum = 0;
    while (sqlite3_step(stmt) == SQLITE_ROW) {
      sum += sqlite3_column_double(stmt, 4);
      benchmark::DoNotOptimize(sqlite3_column_text(stmt, 2));
      ++rows;
    }
    sqlite3_finalize(stmt);
    benchmark::DoNotOptimize(sum);
  }
  sqlite3_close(db);
  state.counters["rows"] = static_cast<double>(rows);
}
BENCHMARK(BM_SqlScanOfTheSameRows)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);

}  // namespace

BENCHMARK_MAIN();
