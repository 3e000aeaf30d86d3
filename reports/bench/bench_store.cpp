// Store and renderer throughput. Peer for the store: a raw sqlite3 prepared-insert loop into the same
// samples table, one transaction per case, same pragmas (WAL, synchronous=NORMAL). Printed at the end:
// store samples/s divided by the peer's (target: store >= 100k samples/s), and HTML render time of a
// 1,000-case run (target < 2 s).
#include <benchmark/benchmark.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <map>

#include "reports/bench/synthetic_run.hpp"
#include "reports/render.hpp"
#include "reports/store.hpp"

namespace {

namespace fs = std::filesystem;
using namespace mlsb::reports;

constexpr int kMetrics = 4, kSamples = 250;  // 1,000 samples per case

fs::path fresh_db(const char* name) {
  const fs::path p = fs::temp_directory_path() / (std::string(name) + "-" + std::to_string(::getpid()) + ".db");
  for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(p.string() + suffix);
  return p;
}

void BM_StoreAddCase(benchmark::State& state) {
  const fs::path path = fresh_db("bench-store");
  {
    Store store(path);
    RunRecord run;
    const int64_t run_id = store.begin_run(run);
    auto data = bench::synthetic_run(1, kMetrics, kSamples);
    CaseRecord c = data.cases.front();
    for (auto _ : state) store.add_case(run_id, c);
    state.counters["samples/s"] =
        benchmark::Counter(double(state.iterations()) * kMetrics * kSamples, benchmark::Counter::kIsRate);
  }
  for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(path.string() + suffix);
}
BENCHMARK(BM_StoreAddCase)->Unit(benchmark::kMillisecond)->UseRealTime();

void check(int rc, sqlite3* db) {
  if (rc != SQLITE_OK && rc != SQLITE_DONE) throw std::runtime_error(sqlite3_errmsg(db));
}

void BM_RawSqliteInsert(benchmark::State& state) {
  const fs::path path = fresh_db("bench-raw");
  sqlite3* db = nullptr;
  check(sqlite3_open(path.c_str(), &db), db);
  check(sqlite3_exec(db,
                     "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; CREATE TABLE samples (case_id INTEGER, "
                     "idx INTEGER, metric TEXT, value REAL, PRIMARY KEY (case_id, metric, idx)) WITHOUT ROWID;",
                     nullptr, nullptr, nullptr),
        db);
  sqlite3_stmt* insert = nullptr;
  check(sqlite3_prepare_v2(db, "INSERT INTO samples VALUES (?,?,?,?)", -1, &insert, nullptr), db);
  const std::string metrics[kMetrics] = {"time_ms", "metric1", "metric2", "metric3"};
  int64_t case_id = 0;
  for (auto _ : state) {
    ++case_id;
    check(sqlite3_exec(db, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), db);
    for (const auto& m : metrics)
      for (int i = 0; i < kSamples; ++i) {
        sqlite3_bind_int64(insert, 1, case_id);
        sqlite3_bind_int64(insert, 2, i);
        sqlite3_bind_text(insert, 3, m.c_str(), -1, SQLITE_STATIC);
        sqlite3_bind_double(insert, 4, 1.0 + i);
        check(sqlite3_step(insert), db);
        sqlite3_reset(insert);
      }
    check(sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr), db);
  }
  state.counters["samples/s"] =
      benchmark::Counter(double(state.iterations()) * kMetrics * kSamples, benchmark::Counter::kIsRate);
  sqlite3_finalize(insert);
  sqlite3_close(db);
  for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(path.string() + suffix);
}
BENCHMARK(BM_RawSqliteInsert)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_RenderHtml1000Cases(benchmark::State& state) {
  const auto data = bench::synthetic_run(1000, 3, 20, /*tasks_per_case=*/4);
  size_t bytes = 0;
  for (auto _ : state) {
    const std::string html = render(data, Format::Html);
    bytes = html.size();
    benchmark::DoNotOptimize(html.data());
  }
  state.counters["bytes"] = double(bytes);
}
BENCHMARK(BM_RenderHtml1000Cases)->Unit(benchmark::kMillisecond);

// Console output as usual, plus the store/peer ratio at the end.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  RatioReporter() : ConsoleReporter(OO_Tabular) {}  // no colour codes: the output often goes to logs
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const auto& r : runs)
      if (const auto it = r.counters.find("samples/s"); it != r.counters.end())
        rates_[r.run_name.function_name] = it->second.value;
    ConsoleReporter::ReportRuns(runs);
  }
  void Finalize() override {
    ConsoleReporter::Finalize();
    const auto store = rates_.find("BM_StoreAddCase"), raw = rates_.find("BM_RawSqliteInsert");
    if (store != rates_.end() && raw != rates_.end())
      std::printf("store/raw sqlite3 insert throughput: %.0f / %.0f samples/s = %.2f\n", store->second, raw->second,
                  store->second / raw->second);
  }

 private:
  std::map<std::string, double> rates_;
};

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return 0;
}
