#pragma once
// Fixed inputs for the reports tests: small runs built in code (the golden-file matcher is support/golden.hpp).
#include <gtest/gtest.h>

#include <string>

#include "reports/model.hpp"

namespace mlsb::reports::test {

/// A case of `workload` whose samples are given per metric ("time_ms" is primary, ms, lower is better;
/// any other metric is GB/s, higher is better). Summaries come from mlsb::summarize.
inline CaseRecord make_case(const std::string& workload, const nlohmann::json& params,
                            const std::map<std::string, std::vector<double>>& samples, CaseStatus status = CaseStatus::Ok,
                            std::string reason = "") {
  CaseRecord c;
  c.workload = workload;
  c.params = params;
  for (const auto& [k, v] : params.items())
    c.params_key += (c.params_key.empty() ? "" : ",") + k + "=" + (v.is_string() ? v.get<std::string>() : v.dump());
  c.status = status;
  c.reason = std::move(reason);
  c.primary_metric = "time_ms";
  c.started_at = 1767225600;
  c.finished_at = 1767225601.5;
  c.samples = samples;
  for (const auto& [metric, values] : samples) {
    const bool time = metric == "time_ms";
    c.summaries.push_back({metric, time ? "ms" : "GB/s", time ? Better::Lower : Better::Higher, summarize(values)});
  }
  return c;
}

/// One toolbench task item as the toolbench workload stores it.
inline std::pair<std::string, nlohmann::json> task_item(const std::string& uuid, const std::string& category,
                                                        const std::string& tool, bool param_match, bool pass,
                                                        const std::string& reason) {
  return {"task/" + uuid + "/0",
          {{"uuid", uuid}, {"category", category}, {"query", "Read <notes> & \"todo\" | " + uuid},
           {"tool", tool}, {"calls", {{{"name", tool}, {"arguments", {{"path", param_match ? "/a" : "/b"}}}}}},
           {"expected", {{{"name", tool}, {"arguments", {{"path", "/a"}}}}}}, {"tool_match", true},
           {"param_match", param_match}, {"exec_pass", pass}, {"pass", pass}, {"reason", reason},
           {"result_excerpt", "ok"}, {"latency_ms", 12.5}}};
}

/// The run behind the golden files: two workloads, a single-sample case, a failed case with a reason that
/// needs escaping, a skipped case, and a toolbench case (all defaults: empty label) with task items.
inline RunData fixture_run() {
  RunData d;
  d.run.id = 7;
  d.run.uuid = "3f2a9c1e-0000-4000-8000-000000000001";
  d.run.suite = "smoke";
  d.run.status = reports::RunStatus::Ok;
  d.run.argv = "mlsysbench run smoke --seed 42";
  d.run.tags = {"nightly", "ci"};
  d.run.seed = 42;
  d.run.git_sha = "0123456789abcdef";
  d.run.git_dirty = true;
  d.run.started_at = 1767225600;
  d.run.finished_at = 1767225660;
  d.run.env = {{"host", "node-1"}, {"cpu_model", "Test CPU"}, {"cores", 2}};  // keys as harness/environment.cpp
  d.cases.push_back(make_case("moe_train", {{"experts", 8}, {"topk", 2}},
                              {{"time_ms", {10.0, 10.5, 11.0, 10.2, 10.8}}, {"bw", {100, 98, 102, 101, 99}}}));
  d.cases.back().label = "experts=8";  // topk=2 is the axis default
  d.cases.push_back(make_case("moe_train", {{"experts", 16}, {"topk", 2}}, {{"time_ms", {12.0}}, {"bw", {90}}}));
  d.cases.back().label = "experts=16";
  d.cases.push_back(make_case("moe_train", {{"experts", 64}, {"topk", 2}}, {}, CaseStatus::Failed,
                              "gradient mismatch | max err <0.5> & more"));
  d.cases.back().label = "experts=64";
  d.cases.push_back(make_case("moe_train", {{"experts", 128}, {"topk", 8}}, {}, CaseStatus::Skipped, "needs cuda"));
  d.cases.back().label = "experts=128,topk=8";
  auto tb = make_case("toolbench", {{"model", "mock"}}, {{"time_ms", {50, 52, 51}}});  // label "": all defaults
  tb.items = {task_item("t1", "filesystem", "read_file", true, true, ""),
              task_item("t2", "filesystem", "read_file", false, false, "argument path differs"),
              task_item("t3", "memory", "create_entities", true, true, "")};
  d.cases.push_back(std::move(tb));
  return d;
}

/// fixture_run as a nightly CI run records it: a machine key, a branch, GitHub Actions metadata, the GPU state of
/// the first case, and a throttled second case.
inline RunData fixture_run_nightly() {
  RunData d = fixture_run();
  d.run.machine_key = "9c1f0a2b7d3e4f56";
  d.run.branch = "main";
  d.run.ci = {{"repository", "org/mlsysbench"}, {"run_id", "123456789"}, {"workflow", "nightly"}};
  d.cases[0].gpu = {{"before", {{{"index", 0}, {"sm_clock_mhz", 1980}}}}, {"throttle_reasons", nlohmann::json::array()}};
  d.cases[1].gpu = {{"throttle_reasons", {"hw_slowdown"}}};
  d.cases[1].throttled = true;
  return d;
}

/// Expects `a` and `b` to hold the same case in every field but the id (summary statistics compared exactly).
inline void expect_same_case(const CaseRecord& a, const CaseRecord& b) {
  EXPECT_EQ(a.workload, b.workload);
  EXPECT_EQ(a.params, b.params);
  EXPECT_EQ(a.params_key, b.params_key);
  EXPECT_EQ(a.label, b.label);
  EXPECT_EQ(a.backend, b.backend);
  EXPECT_EQ(a.comm, b.comm);
  EXPECT_EQ(a.ranks, b.ranks);
  EXPECT_EQ(a.status, b.status);
  EXPECT_EQ(a.reason, b.reason);
  EXPECT_EQ(a.primary_metric, b.primary_metric);
  EXPECT_EQ(a.started_at, b.started_at);
  EXPECT_EQ(a.finished_at, b.finished_at);
  EXPECT_EQ(a.gpu, b.gpu);
  EXPECT_EQ(a.throttled, b.throttled);
  EXPECT_EQ(a.samples, b.samples);
  ASSERT_EQ(a.summaries.size(), b.summaries.size());
  for (size_t i = 0; i < a.summaries.size(); ++i) {
    const auto &x = a.summaries[i], &y = b.summaries[i];
    EXPECT_EQ(x.metric, y.metric);
    EXPECT_EQ(x.unit, y.unit);
    EXPECT_EQ(x.better, y.better);
    EXPECT_EQ(x.stats.n, y.stats.n);
    for (auto field : {&Summary::min, &Summary::median, &Summary::mean, &Summary::stddev, &Summary::rel_stddev,
                       &Summary::p05, &Summary::p95, &Summary::max, &Summary::ci_lo, &Summary::ci_hi})
      EXPECT_EQ(x.stats.*field, y.stats.*field) << x.metric;
  }
  EXPECT_EQ(a.items, b.items);
}

}  // namespace mlsb::reports::test
