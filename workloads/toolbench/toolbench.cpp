// The toolbench workload: MCPToolBench++-format tasks run by an agent against real MCP servers,
// scored by tool match, AST parameter match and execution (see scorer.hpp), with pass@k over trials.
#include <chrono>
#include <filesystem>
#include <set>

#include "harness/registry.hpp"
#include "harness/stats.hpp"
#include "harness/workload.hpp"
#include "workloads/toolbench/agent.hpp"
#include "workloads/toolbench/item.hpp"
#include "workloads/toolbench/scorer.hpp"
#include "workloads/toolbench/task.hpp"
#include "workloads/toolbench/trial.hpp"

namespace mlsb::toolbench {

namespace fs = std::filesystem;

namespace {

// A relative path names a file under the current directory if one is there, else under the source tree
// (so the defaults are stable case keys that work from any directory).
fs::path resolve_input(const std::string& value) {
  const fs::path p(value);
  if (p.is_absolute() || fs::exists(p)) return p;
  return fs::path(MLSB_SOURCE_DIR) / p;
}

// "none" -> empty; "auto" -> `beside` when it exists, else empty; anything else -> that path.
fs::path optional_input(const std::string& value, const fs::path& beside) {
  if (value == "none") return {};
  if (value == "auto") return fs::exists(beside) ? beside : fs::path();
  return resolve_input(value);
}

struct Unit {
  const Task* task = nullptr;         // a loaded task, or
  const RecordError* bad = nullptr;   // a record that did not load
  std::size_t index = 0;
};

class ToolbenchWorkload final : public Workload {
 public:
  WorkloadInfo info() const override {
    WorkloadInfo w;
    w.name = "toolbench";
    w.description =
        "MCPToolBench++-format tool-call tasks run by an agent against real MCP servers (fresh fixture copy "
        "and servers per task trial); scored by tool match, BFCL-style AST parameter match and execution.";
    w.axes = {
        {"dataset", AxisType::String, {std::string("datasets/toolbench/tasks.json")},
         "task file (JSON array of MCPToolBench++ records); relative paths also tried under the source tree", {}},
        {"servers", AxisType::String, {std::string("workloads/toolbench/servers.json")},
         "servers config {\"mcpServers\": {...}} with ${workdir}, ${memory_file}, ... placeholders", {}},
        {"agent", AxisType::String, {std::string("oracle")}, "agent solving the tasks", agent_names()},
        {"trials", AxisType::Int, {int64_t{1}}, "trials per task (the k of pass@k)", {}},
        {"fixture", AxisType::String, {std::string("auto")},
         "fixture folder copied per trial; auto = <dataset dir>/fixture, else the dataset's folder (subfolders)", {}},
        {"placeholders", AxisType::String, {std::string("auto")},
         "placeholder files for the fixture; auto = placeholders.json beside the servers config; none", {}},
        {"memory_seed", AxisType::String, {std::string("auto")},
         "memory-server seed copied to ${memory_file} per trial; auto = memory_seed.jsonl beside the dataset; none", {}},
        {"call_timeout_ms", AxisType::Int, {int64_t{30000}}, "timeout of each MCP request (ms)", {}},
        {"max_steps", AxisType::Int, {int64_t{8}}, "tool calls an agent may make per task trial", {}},
        {"limit", AxisType::Int, {int64_t{0}}, "only the first N records of the task file (0 = all)", {}},
    };
    w.metrics = {
        {"pass_at_1", "ratio", Better::Higher, "mean over tasks of the unbiased pass@1 (Chen et al. 2021)"},
        {"pass_at_k", "ratio", Better::Higher, "mean over tasks of the unbiased pass@k, k = trials"},
        {"ast_accuracy", "ratio", Better::Higher, "share of task trials with tool match and parameter match"},
        {"exec_pass_rate", "ratio", Better::Higher, "share of task trials whose calls all executed with content"},
        {"call_latency_p50_ms", "ms", Better::Lower, "median tools/call round trip"},
        {"call_latency_p95_ms", "ms", Better::Lower, "95th percentile tools/call round trip"},
        {"tasks_per_s", "tasks/s", Better::Higher, "task trials per second, fixture copies and server starts included"},
    };
    w.primary_metric = "pass_at_1";
    w.runner.warmup = 0;
    w.runner.min_samples = 1;
    w.runner.max_samples = 1;
    w.runner.min_time_s = 0;
    w.runner.timeout_s = 3600;
    return w;
  }

  void setup(State& state) override {
    trials_ = static_cast<int>(state.get_int("trials"));
    if (trials_ < 1) state.skip("trials must be >= 1");
    if (state.get_int("max_steps") < 1) state.skip("max_steps must be >= 1");
    if (state.get_int("call_timeout_ms") < 1) state.skip("call_timeout_ms must be >= 1");
    try {
      const fs::path dataset = resolve_input(state.get_string("dataset"));
      const fs::path servers = resolve_input(state.get_string("servers"));
      data_ = load_dataset(dataset);
      setup_ = TrialSetup{};
      setup_.servers = load_servers_config(servers);
      setup_.fixture = resolve_fixture(state.get_string("fixture") == "auto" ? "auto"
                                           : resolve_input(state.get_string("fixture")).string(),
                                       dataset);
      if (fs::path p = optional_input(state.get_string("placeholders"), servers.parent_path() / "placeholders.json");
          !p.empty())
        setup_.placeholders = load_placeholders(p);
      setup_.memory_seed = optional_input(state.get_string("memory_seed"), dataset.parent_path() / "memory_seed.jsonl");
      setup_.call_timeout = std::chrono::milliseconds(state.get_int("call_timeout_ms"));
      setup_.max_steps = static_cast<int>(state.get_int("max_steps"));
      agent_ = make_agent(state.get_string("agent"), data_.tasks);
    } catch (const std::exception& e) {
      state.fail(e.what());
    }
    const auto limit = static_cast<std::size_t>(std::max<int64_t>(0, state.get_int("limit")));
    units_.clear();
    for (const auto& t : data_.tasks) units_.push_back({&t, nullptr, t.index});
    for (const auto& e : data_.errors) units_.push_back({nullptr, &e, e.index});
    std::sort(units_.begin(), units_.end(), [](const Unit& a, const Unit& b) { return a.index < b.index; });
    if (limit > 0 && units_.size() > limit) units_.resize(limit);
    if (units_.empty()) state.fail("task file " + data_.path.string() + " has no records");
  }

  void sample(State& state) override {
    std::set<std::string> good;
    for (const auto& t : data_.tasks) good.insert(t.uuid);
    std::vector<double> latencies;
    double ast = 0, exec = 0, p1 = 0, pk = 0;
    items_ = 0;
    unexplained_.clear();
    const auto t0 = std::chrono::steady_clock::now();
    for (const Unit& u : units_) {
      if (state.cancelled()) return;  // the runner discards this sample
      int passes = 0;
      for (int t = 0; t < trials_; ++t) {
        if (u.bad) {
          const bool own_key = !u.bad->uuid.empty() && !good.count(u.bad->uuid);
          add(state, item_key(own_key ? u.bad->uuid : "record-" + std::to_string(u.index), t),
              make_bad_record_item(*u.bad));
          continue;
        }
        const fs::path dir = state.work_dir() / "trials" / (std::to_string(u.index) + "-" + std::to_string(t));
        const TrialRun run = run_trial(*u.task, *agent_, t, setup_, dir);
        const TrialScore score = score_trial(*u.task, run.calls, run.error);
        for (const auto& c : run.calls)
          if (c.outcome.latency_ms > 0) latencies.push_back(c.outcome.latency_ms);
        ast += score.tool_match && score.param_match;
        exec += score.exec_pass;
        passes += score.pass;
        add(state, item_key(u.task->uuid, t), make_item(*u.task, run, score));
        std::error_code ec;
        fs::remove_all(dir, ec);
      }
      p1 += pass_at_k(trials_, passes, 1);
      pk += pass_at_k(trials_, passes, trials_);
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double units = static_cast<double>(units_.size()), runs = units * trials_;
    state.record("pass_at_1", p1 / units);
    state.record("pass_at_k", pk / units);
    state.record("ast_accuracy", ast / runs);
    state.record("exec_pass_rate", exec / runs);
    state.record("tasks_per_s", runs / std::max(seconds, 1e-9));
    if (!latencies.empty()) {  // no call reached a server: no latency to report
      state.record("call_latency_p50_ms", percentile(latencies, 0.50));
      state.record("call_latency_p95_ms", percentile(latencies, 0.95));
    }
  }

  // The harness checks itself: one item per task trial, and every failure explained.
  void verify(State& state) override {
    const std::size_t expected = units_.size() * static_cast<std::size_t>(trials_);
    if (items_ != expected)
      state.fail("wrote " + std::to_string(items_) + " items for " + std::to_string(expected) + " task trials");
    if (!unexplained_.empty()) state.fail("failing task trial without a reason: " + unexplained_);
  }

  void teardown(State& state) override {
    std::error_code ec;
    fs::remove_all(state.work_dir() / "trials", ec);
    agent_.reset();
    units_.clear();
    data_ = Dataset{};
  }

 private:
  void add(State& state, std::string key, nlohmann::json item) {
    if (!item["pass"].get<bool>() && item["reason"].get<std::string>().empty()) unexplained_ = key;
    state.add_item(std::move(key), std::move(item));
    ++items_;
  }

  Dataset data_;
  TrialSetup setup_;
  std::unique_ptr<Agent> agent_;
  std::vector<Unit> units_;
  int trials_ = 1;
  std::size_t items_ = 0;
  std::string unexplained_;
};

}  // namespace

MLSB_REGISTER_WORKLOAD(ToolbenchWorkload);

}  // namespace mlsb::toolbench
