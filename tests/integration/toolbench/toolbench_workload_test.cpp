// The toolbench workload through the Workload API with a real State, real fixture copies and real npm
// MCP servers.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <iostream>
#include <map>
#include <utility>

#include "harness/registry.hpp"
#include "harness/workload.hpp"
#include "integration/toolbench/toolbench_case.hpp"
#include "support/test_support.hpp"

namespace mlsb {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using test::CaseResult;

CaseResult run_case(const std::map<std::string, Value>& overrides) { return test::run_toolbench_case(overrides); }

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += x + "\n";
  return s;
}

TEST(ToolbenchWorkload, DeclaresItsContract) {
  const WorkloadInfo info = make_workload("toolbench")->info();
  EXPECT_EQ(info.primary_metric, "pass_at_1");
  for (const char* m : {"ast_accuracy", "pass_at_1", "pass_at_k", "exec_pass_rate", "call_latency_p50_ms",
                        "call_latency_p95_ms", "tasks_per_s"})
    EXPECT_NE(info.find_metric(m), nullptr) << m;
  EXPECT_EQ(info.runner.warmup, 0);
  EXPECT_EQ(info.runner.max_samples, 1);
  for (const auto& a : info.axes) {
    if (a.type == AxisType::Int) {
      EXPECT_TRUE(a.min && a.max) << a.name << " is unbounded";
      EXPECT_LE(a.max.value_or(INFINITY), 2147483647.0) << a.name << " must fit an int";
    }
    const bool path = a.name == "dataset" || a.name == "servers" || a.name == "fixture" || a.name == "placeholders" ||
                      a.name == "memory_seed" || a.name == "prices";
    EXPECT_EQ(a.path, path) << a.name;
  }
  EXPECT_EQ(info.find_axis("placeholders")->choices, (std::vector<std::string>{"auto", "none"}));
  EXPECT_EQ(info.find_axis("fixture")->choices, (std::vector<std::string>{"auto"}));
}

TEST(ToolbenchWorkload, OracleScoresOneOnTheAuthoredDataset) {
  const CaseResult r = run_case({{"concurrency", int64_t{2}}});
  ASSERT_EQ(r.failure, "");
  EXPECT_TRUE(r.warnings.empty()) << joined(r.warnings);
  EXPECT_EQ(r.progress, std::make_pair(int64_t(r.items.size()), int64_t(r.items.size())));
  EXPECT_EQ(r.metric("pass_at_1"), 1.0);
  EXPECT_EQ(r.metric("ast_accuracy"), 1.0);
  EXPECT_EQ(r.metric("exec_pass_rate"), 1.0);
  EXPECT_GT(r.metric("call_latency_p50_ms"), 0.0);
  EXPECT_GE(r.metric("call_latency_p95_ms"), r.metric("call_latency_p50_ms"));
  EXPECT_GT(r.metric("tasks_per_s"), 0.0);
  EXPECT_EQ(r.samples.count("retrieval_recall"), 0u);  // every tool offered: no retrieval
  ASSERT_GE(r.items.size(), 30u);
  for (const auto& [key, item] : r.items) {
    EXPECT_TRUE(item["pass"].get<bool>()) << key << ": " << item["reason"];
    EXPECT_EQ(key, "task/" + item["uuid"].get<std::string>() + "/0");
    for (const char* f : {"uuid", "category", "query", "tool", "calls", "expected", "tool_match", "param_match",
                          "exec_pass", "pass", "reason", "result_excerpt", "latency_ms"})
      EXPECT_TRUE(item.contains(f)) << key << " lacks " << f;
    EXPECT_FALSE(item["result_excerpt"].get<std::string>().empty()) << key;
    const std::string excerpt = item["result_excerpt"].get<std::string>();  // 4 KiB, and a marker when cut
    EXPECT_TRUE(excerpt.size() <= 4096 || excerpt.find("... [cut: 4096 of ") != std::string::npos) << excerpt.size();
  }
}

// Trials run on 4 workers give the items and scores of a serial run, in the same order (latencies and
// results, which name each run's own scratch folder, aside).
TEST(ToolbenchWorkload, ConcurrentTrialsGiveTheSerialResults) {
  const CaseResult serial = run_case({{"trials", int64_t{2}}, {"limit", int64_t{12}}});
  const CaseResult parallel = run_case({{"trials", int64_t{2}}, {"limit", int64_t{12}}, {"concurrency", int64_t{4}}});
  ASSERT_EQ(serial.failure, "");
  ASSERT_EQ(parallel.failure, "");
  EXPECT_EQ(parallel.progress, std::make_pair(int64_t{24}, int64_t{24}));
  const auto comparable = [](json item) {
    item.erase("latency_ms");
    item.erase("result_excerpt");
    for (auto& c : item["calls"]) c.erase("latency_ms"), c.erase("result");
    return item;
  };
  ASSERT_EQ(serial.items.size(), parallel.items.size());
  for (std::size_t i = 0; i < serial.items.size(); ++i) {
    EXPECT_EQ(serial.items[i].first, parallel.items[i].first);
    EXPECT_EQ(comparable(serial.items[i].second), comparable(parallel.items[i].second)) << serial.items[i].first;
  }
  for (const char* m : {"pass_at_1", "pass_at_k", "ast_accuracy", "exec_pass_rate", "agent_error_rate"})
    EXPECT_EQ(serial.metric(m), parallel.metric(m)) << m;
}

// The heuristic agent (BM25 tool choice, arguments read off the query) is the floor: it solves the
// single-call tasks whose query names the file and the numbers, and fails the rest with a reason.
TEST(ToolbenchWorkload, HeuristicAgentIsAFloorBelowTheOracle) {
  const CaseResult r = run_case({{"agent", std::string("heuristic")}, {"concurrency", int64_t{2}}});
  ASSERT_EQ(r.failure, "");
  const double p1 = r.metric("pass_at_1");
  EXPECT_GT(p1, 0.1);
  EXPECT_LT(p1, 0.6);
  EXPECT_LE(r.metric("ast_accuracy"), r.metric("exec_pass_rate") + 1e-12);
  std::map<std::string, json> by_query;
  int failed = 0;
  for (const auto& [key, item] : r.items) {
    by_query[item["query"].get<std::string>()] = item;
    if (item["pass"].get<bool>()) continue;
    ++failed;
    EXPECT_FALSE(item["reason"].get<std::string>().empty()) << key;
  }
  EXPECT_NEAR(p1, 1.0 - failed / static_cast<double>(r.items.size()), 1e-12);
  const json& head = by_query.at("Print only the first 5 lines of docs/guide.md.");
  EXPECT_TRUE(head["pass"].get<bool>()) << head["reason"];
  EXPECT_EQ(head["calls"][0]["arguments"], json::parse(R"({"path": "./docs/guide.md", "head": 5})"));
  const json& move = by_query.at("Move data/readings.csv into the archive folder as archive/readings_2024.csv.");
  EXPECT_TRUE(move["pass"].get<bool>()) << move["reason"];
  // Two calls needed, one made: a miss with the reason.
  const json& two = by_query.at("Make a reports folder and write reports/summary.md with the text \"Max gust: 11.4 m/s\".");
  EXPECT_FALSE(two["pass"].get<bool>());
  EXPECT_EQ(two["calls"].size(), 1u);
}

// max_tools offers the N tools BM25 ranks first: recall falls with N and reaches 1 once every tool is
// offered; the oracle replays its labels whatever it is offered.
TEST(ToolbenchWorkload, MaxToolsReportsRetrievalRecall) {
  const auto first_12 = [](const std::string& agent, int64_t max_tools) {
    return run_case({{"agent", agent}, {"max_tools", max_tools}, {"limit", int64_t{12}}, {"concurrency", int64_t{2}}});
  };
  const CaseResult two = first_12("heuristic", 2);
  ASSERT_EQ(two.failure, "");
  const CaseResult six = first_12("heuristic", 6);
  const double r2 = two.metric("retrieval_recall"), r6 = six.metric("retrieval_recall");
  EXPECT_GT(r2, 0.3);
  EXPECT_LT(r2, r6);
  EXPECT_LT(r6, 1.0);
  // The first 12 tasks are filesystem ones: all 14 of the server's tools offered is recall 1.
  EXPECT_EQ(first_12("oracle", 14).metric("retrieval_recall"), 1.0);
  const CaseResult oracle = first_12("oracle", 2);
  EXPECT_EQ(oracle.metric("pass_at_1"), 1.0);
  EXPECT_EQ(oracle.metric("retrieval_recall"), r2);
}

// A server that cannot start is the environment's fault, not the agent's: every task fails with the
// reason and the case fails naming the server and the cause; the items are kept.
TEST(ToolbenchWorkload, DeadServersFailTheCaseNamingServerAndCause) {
  struct Broken {
    std::string entry, cause;
  };
  const std::vector<Broken> cases = {
      {R"({"command": "mlsb-no-such-server", "args": ["${workdir}"]})", "command 'mlsb-no-such-server' not found"},
      {R"({"command": "false"})", "exit"},  // exits before answering initialize
      {R"({"url": "http://127.0.0.1:1/mcp"})", "127.0.0.1 port 1"},
      {R"({"command": "${nope}/server"})", "unknown placeholder ${nope}"},
  };
  for (const auto& c : cases) {
    test::TempDir dir;
    test::write_file(dir / "servers.json",
                     R"({"mcpServers": {"filesystem": )" + c.entry + R"(, "memory": {"command": "false"}}})");
    const CaseResult r = run_case({{"servers", (dir / "servers.json").string()}, {"limit", int64_t{6}}});
    EXPECT_EQ(r.failure.rfind("server 'filesystem' could not start in 6 of 6 task trials: ", 0), 0u)
        << c.entry << ": " << r.failure;
    EXPECT_NE(r.failure.find(c.cause), std::string::npos) << c.entry << ": " << r.failure;
    ASSERT_EQ(r.items.size(), 6u) << c.entry;
    EXPECT_EQ(r.metric("pass_at_1"), 0.0);
    EXPECT_EQ(r.samples.count("call_latency_p50_ms"), 0u);  // no call reached a server
    for (const auto& [key, item] : r.items) {
      EXPECT_FALSE(item["pass"].get<bool>());
      const std::string reason = item["reason"].get<std::string>();
      EXPECT_NE(reason.find("cannot start server 'filesystem': "), std::string::npos) << key << ": " << reason;
      EXPECT_NE(reason.find(c.cause), std::string::npos) << key << ": " << reason;
    }
  }
}

// A tools/call that times out keeps its real elapsed time in the item (answered: false) and stays out of
// the latency percentiles, which measure servers that answered.
TEST(ToolbenchWorkload, TimedOutCallsKeepTheirTimeAndStayOutOfTheLatencyPercentiles) {
  test::TempDir dir;
  const std::string hang =
      R"({"command": "node", "args": [")" + (test::source_dir() / "tests/integration/mcp/fakes/never_answers.mjs").string() + R"("]})";
  test::write_file(dir / "servers.json", R"({"mcpServers": {"filesystem": )" + hang + R"(, "memory": )" + hang + "}}");
  const CaseResult r = run_case(
      {{"servers", (dir / "servers.json").string()}, {"limit", int64_t{2}}, {"call_timeout_ms", int64_t{1500}}});
  EXPECT_EQ(r.samples.count("call_latency_p50_ms"), 0u);
  EXPECT_EQ(r.samples.count("call_latency_p95_ms"), 0u);
  // The timeout covers initialize too (trial.hpp): a server slower than it to start on a loaded machine
  // fails its call at once, so only the calls its server started for are timed; at least one must be.
  int timed = 0;
  for (const auto& [key, item] : r.items)
    for (const auto& call : item["calls"]) {
      EXPECT_FALSE(call["answered"].get<bool>()) << key;
      EXPECT_TRUE(call["is_error"].get<bool>()) << key;
      if (call.dump().find("cannot start server") != std::string::npos) continue;
      ++timed;
      EXPECT_GE(call["latency_ms"].get<double>(), 1450.0) << key << ": " << call.dump();
    }
  EXPECT_GE(timed, 1);
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
  // Both are dataset problems: the case stays ok, with warnings naming the file, the server and counts.
  EXPECT_EQ(r.failure, "");
  ASSERT_EQ(r.warnings.size(), 2u) << joined(r.warnings);
  EXPECT_EQ(r.warnings[0], "1 bad record in " + (dir / "tasks.json").string() +
                               " (first: record 2 (uuid bad-record): missing field 'query')");
  EXPECT_NE(r.warnings[1].find("server 'weather' is not in the servers config"), std::string::npos) << r.warnings[1];
  EXPECT_NE(r.warnings[1].find("(2 task trials failed calling it)"), std::string::npos) << r.warnings[1];
  EXPECT_EQ(r.progress, std::make_pair(int64_t{6}, int64_t{6}));
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
  const CaseResult r = run_case({{"dataset", map.string()}});
  EXPECT_NE(r.failure.find("map_single_demo.json: not valid JSON"), std::string::npos) << r.failure;
  EXPECT_TRUE(r.items.empty());
}

// Inputs that are not what they must be fail the case in setup with a message naming the path.
TEST(ToolbenchWorkload, UnusableInputsFailTheCaseNamingThePath) {
  test::TempDir dir;
  const std::size_t depth = 100000;
  test::write_file(dir / "deep.json", std::string(depth, '[') + std::string(depth, ']'));
  test::write_file(dir / "deep_servers.json", R"({"mcpServers": )" + std::string(depth, '[') + std::string(depth, ']') + "}");
  const fs::path tasks = test::source_dir() / "datasets" / "toolbench" / "tasks.json";
  struct Bad {
    std::map<std::string, Value> params;
    std::string message;
  };
  std::vector<Bad> cases = {
      {{{"dataset", (dir / "deep.json").string()}}, "task file " + (dir / "deep.json").string() + ": JSON nesting deeper than 512 levels"},
      {{{"servers", (dir / "deep_servers.json").string()}}, "servers config " + (dir / "deep_servers.json").string() + ": JSON nesting deeper than 512 levels"},
      {{{"dataset", dir.path().string()}}, "task file " + dir.path().string() + ": is not a regular file (a folder)"},
      {{{"servers", dir.path().string()}}, "servers config " + dir.path().string() + ": is not a regular file (a folder)"},
      {{{"placeholders", dir.path().string()}}, "placeholders file " + dir.path().string() + ": is not a regular file"},
      {{{"memory_seed", dir.path().string()}}, "memory seed " + dir.path().string() + ": is not a regular file"},
      {{{"fixture", tasks.string()}}, "fixture folder " + tasks.string() + " is not a folder"},
  };
  if (fs::exists("/dev/zero"))
    cases.push_back({{{"dataset", std::string("/dev/zero")}}, "task file /dev/zero: is not a regular file"});
  for (const auto& c : cases) {
    const CaseResult r = run_case(c.params);
    EXPECT_NE(r.failure.find(c.message), std::string::npos) << c.message << "\n got: " << r.failure;
    EXPECT_TRUE(r.items.empty());
  }
}

TEST(ToolbenchWorkload, PathAxisValuesAreExpanded) {
  const CaseResult r = run_case({{"dataset", std::string("${source_dir}/datasets/toolbench/tasks.json")},
                                 {"fixture", std::string("${source_dir}/datasets/toolbench/fixture")},
                                 {"limit", int64_t{2}}});
  EXPECT_EQ(r.failure, "");
  EXPECT_EQ(r.items.size(), 2u);
}

TEST(ToolbenchWorkload, CancelledSampleStopsBeforeTheNextTaskTrial) {
  auto w = make_workload("toolbench");
  const WorkloadInfo info = w->info();
  Params params;
  for (const auto& a : info.axes) params[a.name] = a.defaults.at(0);
  test::TempDir work;
  State st(info, params, 1, work.path());
  const std::atomic<bool> cancel{true};
  st.set_cancel_flag(&cancel);
  w->setup(st);
  st.begin_sample(0, false);
  w->sample(st);
  EXPECT_TRUE(st.items().empty());
  EXPECT_TRUE(st.samples().empty());
  EXPECT_EQ(st.progress().first, 0);
  w->teardown(st);
}

// The plan rejects out-of-range numbers for every numeric axis (exit 2), before any case runs.
TEST(ToolbenchWorkload, OutOfRangeAxisValuesAreInputErrors) {
  test::TempDir dir;
  const std::string db = "--db '" + (dir / "x.db").string() + "' ";
  for (const std::string p : {"trials=0", "trials=-1", "trials=4294967297", "call_timeout_ms=0", "call_timeout_ms=-1",
                              "call_timeout_ms=10000000000000", "max_steps=0", "max_steps=4294967296", "limit=-5"}) {
    const auto r = test::run_shell("'" + test::binary().string() + "' " + db + "run toolbench -p " + p);
    EXPECT_EQ(r.exit_code, 2) << p << "\n" << r.err;
    EXPECT_NE(r.err.find("axis '" + p.substr(0, p.find('=')) + "': "), std::string::npos) << p << ": " << r.err;
    EXPECT_NE(r.err.find("is out of range"), std::string::npos) << p << ": " << r.err;
  }
  EXPECT_FALSE(fs::exists(dir / "x.db"));
  const auto ok = test::run_shell("'" + test::binary().string() + "' run toolbench -p trials=1000 -p limit=10000000 "
                                  "-p call_timeout_ms=3600000 -p max_steps=1000 --dry-run");
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
}

}  // namespace
}  // namespace mlsb
