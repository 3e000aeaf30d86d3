#pragma once
// A synthetic run for benchmarks and tests: `cases` cases of one workload with `metrics` metrics of
// `samples` samples each (summarised with mlsb::summarize) and, optionally, toolbench task items.
#include <random>
#include <string>

#include "reports/model.hpp"

namespace mlsb::reports::bench {

inline RunData synthetic_run(int cases, int metrics, int samples, int tasks_per_case = 0, uint64_t seed = 1) {
  RunData data;
  data.run.uuid = "00000000-0000-4000-8000-" + std::to_string(100000000000 + seed);
  data.run.suite = "synthetic";
  data.run.status = RunStatus::Ok;
  data.run.argv = "mlsysbench run synthetic";
  data.run.seed = seed;
  data.run.started_at = 1767225600;  // 2026-01-01T00:00:00Z
  data.run.finished_at = 1767225660;
  data.run.env = {{"host", {{"name", "bench-host"}}}, {"cpu", {{"model", "synthetic"}, {"count", 2}}}};
  std::mt19937_64 rng(seed);
  std::lognormal_distribution<double> noise(0, 0.03);
  for (int i = 0; i < cases; ++i) {
    CaseRecord c;
    c.workload = i % 2 ? "toolbench" : "moe_train";
    c.params = {{"size", i}, {"dtype", "bf16"}};
    c.params_key = "dtype=bf16,size=" + std::to_string(i);
    c.status = i % 17 == 3 ? CaseStatus::Failed : CaseStatus::Ok;
    if (c.status == CaseStatus::Failed) c.reason = "verification: max abs error 0.5 > 1e-3";
    c.primary_metric = "time_ms";
    c.started_at = data.run.started_at + i;
    c.finished_at = c.started_at + 0.5;
    for (int m = 0; m < metrics; ++m) {
      const std::string name = m == 0 ? "time_ms" : "metric" + std::to_string(m);
      auto& values = c.samples[name];
      for (int s = 0; s < samples; ++s) values.push_back((1 + i % 7) * (m + 1) * noise(rng));
      c.summaries.push_back({name, m == 0 ? "ms" : "GB/s", m == 0 ? Better::Lower : Better::Higher, summarize(values)});
    }
    for (int t = 0; t < tasks_per_case; ++t) {
      const bool pass = (t + i) % 3 != 0;
      const std::string uuid = "task-" + std::to_string(t);
      c.items.emplace_back("task/" + uuid + "/0",
                           nlohmann::json{{"uuid", uuid}, {"category", t % 2 ? "filesystem" : "search"},
                                          {"query", "find <b>file</b> #" + std::to_string(t)},
                                          {"tool", t % 2 ? "read_file" : "search"},
                                          {"calls", {{{"name", "read_file"}, {"arguments", {{"path", "/a"}}}}}},
                                          {"expected", {{{"name", "read_file"}, {"arguments", {{"path", "/b"}}}}}},
                                          {"tool_match", true}, {"param_match", pass}, {"exec_pass", pass},
                                          {"pass", pass}, {"reason", pass ? "" : "argument path differs"},
                                          {"result_excerpt", "..."}, {"latency_ms", 10.0 + t}});
    }
    data.cases.push_back(std::move(c));
  }
  return data;
}

}  // namespace mlsb::reports::bench
