// The toolbench workload through the Workload API with a real State, real fixture copies and real npm
// MCP servers.
#include <gtest/gtest.h>

#include <iostream>
#include <map>

#include "harness/registry.hpp"
#include "harness/workload.hpp"
#include "support/test_support.hpp"

namespace mlsb {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct CaseResult {
  std::map<std::string, std::vector<double>> samples;
  std::vector<std::pair<std::string, json>> items;
  double metric(const std::string& m) const { return samples.at(m).at(0); }
};

// Runs one toolbench case (defaults overridden by `overrides`) the way the runner does.
CaseResult run_case(const std::map<std::string, Value>& overrides) {
  auto w = make_workload("toolbench");
  const WorkloadInfo info = w->info();
  Params params;
  for (const auto& a : info.axes) params[a.name] = a.defaults.at(0);
  for (const auto& [k, v] : overrides) params[k] = v;
  test::TempDir work;
  State st(info, params, 1, work.path());
  w->setup(st);
  st.begin_sample(0, false);
  w->sample(st);
  w->verify(st);
  w->teardown(st);
  return {st.samples(), st.items()};
}

fs::path shared_tasks() {
  return test::shared_dir() / "mcptoolbench" / "data" / "file_system" / "filesystem_0723_single.json";
}

TEST(ToolbenchWorkload, DeclaresItsContract) {
  const WorkloadInfo info = make_workload("toolbench")->info();
  EXPECT_EQ(info.primary_metric, "pass_at_1");
  for (const char* m : {"ast_accuracy", "pass_at_1", "pass_at_k", "exec_pass_rate", "call_latency_p50_ms",
                        "call_latency_p95_ms", "tasks_per_s"})
    EXPECT_NE(info.find_metric(m), nullptr) << m;
  EXPECT_EQ(info.runner.warmup, 0);
  EXPECT_EQ(info.runner.max_samples, 1);
}

TEST(ToolbenchWorkload, OracleScoresOneOnTheAuthoredDataset) {
  const CaseResult r = run_case({});
  EXPECT_EQ(r.metric("pass_at_1"), 1.0);
  EXPECT_EQ(r.metric("ast_accuracy"), 1.0);
  EXPECT_EQ(r.metric("exec_pass_rate"), 1.0);
  EXPECT_GT(r.metric("call_latency_p50_ms"), 0.0);
  EXPECT_GE(r.metric("call_latency_p95_ms"), r.metric("call_latency_p50_ms"));
  EXPECT_GT(r.metric("tasks_per_s"), 0.0);
  ASSERT_GE(r.items.size(), 30u);
  for (const auto& [key, item] : r.items) {
    EXPECT_TRUE(item["pass"].get<bool>()) << key << ": " << item["reason"];
    EXPECT_EQ(key, "task/" + item["uuid"].get<std::string>() + "/0");
    for (const char* f : {"uuid", "category", "query", "tool", "calls", "expected", "tool_match", "param_match",
                          "exec_pass", "pass", "reason", "result_excerpt", "latency_ms"})
      EXPECT_TRUE(item.contains(f)) << key << " lacks " << f;
    EXPECT_FALSE(item["result_excerpt"].get<std::string>().empty()) << key;
    EXPECT_LE(item["result_excerpt"].get<std::string>().size(), 300u);
  }
}

TEST(ToolbenchWorkload, PublishedFilesystemTasksAllProduceItems) {
  if (!fs::exists(shared_tasks())) GTEST_SKIP() << "no " << shared_tasks();
  const CaseResult r = run_case({{"dataset", shared_tasks().string()}});
  ASSERT_EQ(r.items.size(), 241u);
  const double p1 = r.metric("pass_at_1");
  EXPECT_GT(p1, 0.0);
  EXPECT_LT(p1, 1.0);
  EXPECT_EQ(r.metric("ast_accuracy"), 1.0);  // the oracle's calls are the labels
  int failed = 0;
  for (const auto& [key, item] : r.items) {
    if (item["pass"].get<bool>()) continue;
    ++failed;
    const std::string reason = item["reason"].get<std::string>();
    EXPECT_FALSE(reason.empty()) << key;
    // Oracle failures are labels that disagree with the fixture, seen by the real server: an edit whose
    // oldText the file lacks, or a write into a folder the fixture lacks.
    EXPECT_EQ(reason.rfind("execution failed: ", 0), 0u) << key << ": " << reason;
    const bool honest = reason.find("Could not find exact match") != std::string::npos ||
                        reason.find("ENOENT") != std::string::npos;
    EXPECT_TRUE(honest) << key << ": " << reason;
  }
  EXPECT_NEAR(p1, (241.0 - failed) / 241.0, 1e-12);
  std::cout << "[ oracle  ] pass_at_1 " << p1 << " (" << failed << " of 241 fail), p50 "
            << r.metric("call_latency_p50_ms") << " ms, " << r.metric("tasks_per_s") << " tasks/s\n";
}

TEST(ToolbenchWorkload, MissingServerCommandFailsEveryTaskWithAReason) {
  test::TempDir dir;
  test::write_file(dir / "servers.json", R"({"mcpServers": {
      "filesystem": {"command": "mlsb-no-such-server", "args": ["${workdir}"]},
      "memory": {"command": "mlsb-no-such-server"}}})");
  const CaseResult r = run_case({{"servers", (dir / "servers.json").string()}, {"limit", int64_t{6}}});
  ASSERT_EQ(r.items.size(), 6u);
  EXPECT_EQ(r.metric("pass_at_1"), 0.0);
  EXPECT_EQ(r.samples.count("call_latency_p50_ms"), 0u);  // no call reached a server
  for (const auto& [key, item] : r.items) {
    EXPECT_FALSE(item["pass"].get<bool>());
    EXPECT_NE(item["reason"].get<std::string>().find("mlsb-no-such-server"), std::string::npos)
        << key << ": " << item["reason"];
  }
}

TEST(ToolbenchWorkload, BadRecordsAndUnknownServersAreFailedItems) {
  test::TempDir dir;
  json tasks = json::parse(test::read_file(test::source_dir() / "datasets" / "toolbench" / "tasks.json"));
  json unknown = tasks[0];
  unknown["uuid"] = "unknown-server";
  unknown["function_call_label"][0]["mcp_server"] = "weather";
  json bad = tasks[1];
  bad["uuid"] = "bad-record";
  bad.erase("query");
  test::write_file(dir / "tasks.json", json::array({tasks[0], unknown, bad}).dump());
  const CaseResult r = run_case({{"dataset", (dir / "tasks.json").string()},
                                 {"fixture", (test::source_dir() / "datasets" / "toolbench" / "fixture").string()},
                                 {"trials", int64_t{2}}});
  ASSERT_EQ(r.items.size(), 6u);
  std::map<std::string, json> by_key(r.items.begin(), r.items.end());
  EXPECT_TRUE(by_key.at("task/" + tasks[0]["uuid"].get<std::string>() + "/1")["pass"].get<bool>());
  EXPECT_NE(by_key.at("task/unknown-server/0")["reason"].get<std::string>().find(
                "server 'weather' is not in the servers config"),
            std::string::npos);
  const std::string bad_reason = by_key.at("task/bad-record/1")["reason"].get<std::string>();
  EXPECT_NE(bad_reason.find("bad record"), std::string::npos) << bad_reason;
  EXPECT_NE(bad_reason.find("record 2 (uuid bad-record)"), std::string::npos) << bad_reason;
  EXPECT_NE(bad_reason.find("'query'"), std::string::npos) << bad_reason;
  EXPECT_NEAR(r.metric("pass_at_1"), 1.0 / 3.0, 1e-12);
  EXPECT_NEAR(r.metric("pass_at_k"), 1.0 / 3.0, 1e-12);
}

TEST(ToolbenchWorkload, InvalidTaskFileFailsTheCaseNamingIt) {
  const fs::path map = test::shared_dir() / "mcptoolbench" / "data" / "map" / "map_single_demo.json";
  if (!fs::exists(map)) GTEST_SKIP() << "no " << map;
  try {
    run_case({{"dataset", map.string()}});
    FAIL() << "expected the case to fail";
  } catch (const FailCase& e) {
    EXPECT_NE(std::string(e.what()).find("map_single_demo.json: not valid JSON"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace mlsb
