// The toolbench workload: MCPToolBench++-format tasks run by an agent against real MCP servers,
// scored by tool match, AST parameter match and execution (see scorer.hpp), with pass@k over trials.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "harness/axes.hpp"
#include "harness/registry.hpp"
#include "util/stats.hpp"
#include "harness/suite.hpp"
#include "util/text.hpp"
#include "harness/workload.hpp"
#include "util/json_file.hpp"
#include "workloads/toolbench/agent.hpp"
#include "workloads/toolbench/agents/llm_agent.hpp"
#include "workloads/toolbench/agents/model_options.hpp"
#include "workloads/toolbench/item.hpp"
#include "workloads/toolbench/prices.hpp"
#include "workloads/toolbench/scorer.hpp"
#include "workloads/toolbench/tool_retrieval.hpp"
#include "workloads/toolbench/task.hpp"
#include "workloads/toolbench/trial.hpp"

namespace mlsb::toolbench {

namespace fs = std::filesystem;

namespace {

// "none" -> empty; "auto" -> `beside` when it exists, else empty; anything else -> that path.
fs::path optional_input(const State& state, const char* axis, const fs::path& beside) {
  const std::string value = state.get_string(axis);
  if (value == "none") return {};
  if (value == "auto") return fs::exists(beside) ? beside : fs::path();
  return input_path(state, axis);
}

// "n thing" / "n things".
std::string count_of(std::size_t n, const std::string& thing) {
  return std::to_string(n) + " " + thing + (n == 1 ? "" : "s");
}

// How one configured server fared over a sample's task trials.
struct ServerTally {
  std::size_t used = 0;    // task trials that tried to start it
  std::size_t failed = 0;  // ... in which it could not start
  std::string cause;       // why, the first time
};

struct Unit {
  const Task* task = nullptr;         // a loaded task, or
  const RecordError* bad = nullptr;   // a record that did not load
  std::size_t index = 0;
};

// One task trial's outcome, filled by whichever worker ran it.
struct Slot {
  TrialRun run;
  TrialScore score;
};

// The API key an LLM agent sends: "none" = no key; "auto" = $OPENAI_API_KEY or $ANTHROPIC_API_KEY
// when set (local servers need none); any other value names a variable that must be set.
std::string api_key(const std::string& agent, const std::string& env) {
  if (env == "none") return "";
  const std::string var = env != "auto" ? env : agent == "anthropic" ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY";
  const char* value = std::getenv(var.c_str());
  if (!value && env != "auto") throw std::invalid_argument("api_key_env: environment variable " + var + " is not set");
  return value ? value : "";
}

class ToolbenchWorkload final : public Workload {
 public:
  WorkloadInfo info() const override {
    WorkloadInfo w;
    w.name = "toolbench";
    w.description =
        "MCPToolBench++-format tool-call tasks run by an agent against real MCP servers (fresh fixture copy "
        "and servers per task trial); scored by tool match, BFCL-style AST parameter match and execution.";
    w.axes = {
        data_axis(path_axis("dataset", "${source_dir}/datasets/toolbench/tasks.json",
                            "task file: a JSON array of MCPToolBench++ records, or one record")),
        data_axis(
            path_axis("servers", "${source_dir}/workloads/toolbench/servers.json",
                      "servers config {\"mcpServers\": {...}} with ${workdir}, ${memory_file}, ... placeholders")),
        string_axis("agent", {"oracle"}, "agent solving the tasks", agent_names()),
        int_axis("trials", {1}, "trials per task (the k of pass@k)", 1, 1000),
        data_axis(path_axis(
            "fixture", "auto",
            "fixture folder copied per trial; auto = <dataset dir>/fixture, else the dataset's folder (subfolders)",
            {"auto"})),
        data_axis(
            path_axis("placeholders", "auto",
                      "placeholder files for the fixture; auto = placeholders.json beside the servers config; none",
                      {"auto", "none"})),
        data_axis(path_axis(
            "memory_seed", "auto",
            "memory-server seed copied to ${memory_file} per trial; auto = memory_seed.jsonl beside the dataset; none",
            {"auto", "none"})),
        int_axis("call_timeout_ms", {30000}, "timeout of each MCP request (ms)", 1, 3'600'000),
        int_axis("max_steps", {8}, "tool calls an agent may make per task trial", 1, 1000),
        int_axis("keep_results", {0},
                 "1: each call's whole result is stored in its item (0: the first 4 KiB, marked where cut)", 0, 1),
        data_axis(int_axis("limit", {0}, "only the first N records of the task file (0 = all)", 0, 10'000'000)),
        int_axis("max_tools", {0},
                 "offer each task only the N tools that rank first by BM25 against its query "
                 "(0 = all)",
                 0, 1'000'000),
        int_axis("concurrency", {1}, "task trials run at once (each with its own servers and fixture copy)", 1, 64),
        int_axis("task_deadline_s", {0}, "wall time an agent has per task trial (s; 0 = none): past it, an agent error",
                 0, 86'400),
        string_axis("model", {""}, "LLM agents: the model, as the API names it"),
        string_axis("base_url", {"auto"},
                    "LLM agents: API base URL (openai: .../v1; anthropic: without /v1); "
                    "auto = the provider's public endpoint"),
        string_axis("api_key_env", {"auto"},
                    "LLM agents: environment variable holding the API key; auto = "
                    "OPENAI_API_KEY / ANTHROPIC_API_KEY when set; none = no key"),
        float_axis("temperature", {0.0}, "LLM agents: sampling temperature", 0, 2),
        int_axis("max_output_tokens", {1024}, "LLM agents: max_tokens of each model request", 1, 1'000'000),
        int_axis("model_timeout_ms", {120000}, "LLM agents: timeout of one model request attempt (ms)", 1, 3'600'000),
        int_axis("max_retries", {4}, "LLM agents: retries of a model request (429, 5xx, timeouts, dropped replies)", 0,
                 100),
        int_axis("retry_base_ms", {500}, "LLM agents: first retry backoff (ms; doubles, full jitter, Retry-After wins)",
                 0, 600'000),
        int_axis("budget_requests", {0}, "LLM agents: model requests allowed per sample, over all tasks (0 = no limit)",
                 0, 1'000'000'000),
        int_axis("budget_tokens", {0}, "LLM agents: tokens (input + output) allowed per sample (0 = no limit)", 0,
                 2'000'000'000),
        path_axis("prices", "${source_dir}/workloads/toolbench/prices.json",
                  "model price table (USD per million tokens) for cost_usd; none", {"none"}),
    };
    w.metrics = {
        {"pass_at_1", "ratio", Better::Higher, "mean over tasks of the unbiased pass@1 (Chen et al. 2021)"},
        {"pass_at_k", "ratio", Better::Higher, "mean over tasks of the unbiased pass@k, k = trials"},
        {"ast_accuracy", "ratio", Better::Higher, "share of task trials with tool match and parameter match"},
        {"exec_pass_rate", "ratio", Better::Higher, "share of task trials whose calls all executed with content"},
        {"call_latency_p50_ms", "ms", Better::Lower, "median tools/call round trip"},
        {"call_latency_p95_ms", "ms", Better::Lower, "95th percentile tools/call round trip"},
        {"tasks_per_s", "tasks/s", Better::Higher, "task trials per second, fixture copies and server starts included"},
        {"retrieval_recall", "ratio", Better::Higher, "max_tools > 0: mean over tasks of the share of labelled "
         "calls whose tool (or a similar one) is among the N offered"},
        {"agent_error_rate", "ratio", Better::Lower, "share of task trials ended by an agent error (API failure "
         "after retries, budget, deadline), not by a wrong answer"},
        {"model_latency_p50_ms", "ms", Better::Lower, "LLM agents: median model request, retries and backoff included"},
        {"model_latency_p95_ms", "ms", Better::Lower, "LLM agents: 95th percentile model request"},
        {"input_tokens_per_task", "tokens", Better::Lower, "LLM agents: input tokens billed per task trial"},
        {"output_tokens_per_task", "tokens", Better::Lower, "LLM agents: output tokens billed per task trial"},
        {"cost_usd", "USD", Better::Lower, "LLM agents: estimated cost of the sample at the prices file's rates"},
    };
    w.primary_metric = "pass_at_1";
    w.countable = false;  // the tools run in MCP server processes, which callgrind does not count
    w.examples = {
        "run toolbench -p agent=oracle,heuristic",
        "run toolbench -p dataset=../shared/mcptoolbench/data/file_system/filesystem_0723_single.json -p concurrency=4",
        "run toolbench -p agent=openai -p model=gpt-4o-mini -p trials=3",
        "run toolbench -p agent=heuristic -p max_tools=3,5",
    };
    w.runner = {.warmup = 0, .min_samples = 1, .max_samples = 1, .min_time_s = 0, .timeout_s = 3600};
    return w;
  }

  // An LLM agent's settings are checked when the plan is built: a missing model is an input error.
  void check(const Params& p) const override {
    const std::string agent = to_string(p.at("agent"));
    if (!is_llm_agent(agent)) return;
    const std::string base_url = to_string(p.at("base_url"));
    check_llm_settings(agent, to_string(p.at("model")), base_url == "auto" ? "" : base_url);
  }

  // The int axes are bounded (the plan rejects values out of range), so narrowing them is safe.
  void setup(State& state) override {
    trials_ = static_cast<int>(state.get_int("trials"));
    keep_results_ = state.get_int("keep_results") != 0;
    try {
      const fs::path dataset = input_path(state, "dataset");
      const fs::path servers = input_path(state, "servers");
      data_ = load_dataset(dataset);
      setup_ = TrialSetup{};
      setup_.servers = load_servers_config(servers);
      setup_.fixture = resolve_fixture(input_path(state, "fixture").string(), dataset);
      if (fs::path p = optional_input(state, "placeholders", servers.parent_path() / "placeholders.json"); !p.empty())
        setup_.placeholders = load_placeholders(p);
      setup_.memory_seed = optional_input(state, "memory_seed", dataset.parent_path() / "memory_seed.jsonl");
      if (!setup_.memory_seed.empty()) require_regular_file(setup_.memory_seed, "memory seed");
      setup_.call_timeout = std::chrono::milliseconds(state.get_int("call_timeout_ms"));
      setup_.max_steps = static_cast<int>(state.get_int("max_steps"));
      setup_.max_tools = state.get_int("max_tools");
      setup_.task_deadline = std::chrono::seconds(state.get_int("task_deadline_s"));
      const std::string agent = state.get_string("agent");
      ModelOptions model;
      if (is_llm_agent(agent)) model = model_options(state, agent);
      agents_.clear();
      for (int64_t i = 0; i < state.get_int("concurrency"); ++i)
        agents_.push_back(make_agent(agent, data_.tasks, model));
      price_.reset();
      if (is_llm_agent(agent)) {
        if (fs::path p = optional_input(state, "prices", {}); !p.empty()) {
          price_ = load_prices(p).find(model.model);
          if (!price_) state.warn("no price for model '" + model.model + "' in " + p.string() + ": cost_usd not recorded");
        }
      }
    } catch (const std::exception& e) {
      state.fail(e.what());
    }
    const auto limit = static_cast<std::size_t>(state.get_int("limit"));
    units_.clear();
    label_defects_.clear();
    for (const auto& t : data_.tasks) {
      units_.push_back({&t, nullptr, t.index});
      if (const auto d = label_defects(t); !d.empty()) label_defects_.push_back("task " + t.uuid + ": " + d.front());
    }
    for (const auto& e : data_.errors) units_.push_back({nullptr, &e, e.index});
    std::sort(units_.begin(), units_.end(), [](const Unit& a, const Unit& b) { return a.index < b.index; });
    if (limit > 0 && units_.size() > limit) units_.resize(limit);
    if (units_.empty()) state.fail("task file " + data_.path.string() + " has no records");
    const auto bad = std::count_if(units_.begin(), units_.end(), [](const Unit& u) { return u.bad != nullptr; });
    if (bad > 0) {
      const Unit& first = *std::find_if(units_.begin(), units_.end(), [](const Unit& u) { return u.bad != nullptr; });
      state.warn(count_of(static_cast<std::size_t>(bad), "bad record") + " in " + data_.path.string() +
                 " (first: " + first.bad->problem + ")");
    }
  }

  // Runs every task trial on `concurrency` workers (each its own agent; every trial its own servers and
  // fixture copy), then scores and stores them in task order, so the items and numbers do not depend
  // on the interleaving.
  void sample(State& state) override {
    std::set<std::string> good;
    for (const auto& t : data_.tasks) good.insert(t.uuid);
    std::vector<double> latencies, model_latencies;
    double ast = 0, exec = 0, p1 = 0, pk = 0, recall = 0, agent_errors = 0, input_tokens = 0, output_tokens = 0;
    items_ = 0;
    unexplained_.clear();
    server_tallies_.clear();
    unknown_servers_.clear();
    placeholders_created_.clear();
    first_agent_error_.clear();
    agent_errors_ = 0;
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<Slot> slots = run_trials(state, good);
    if (state.cancelled()) return;  // the runner discards this sample
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    for (std::size_t ui = 0; ui < units_.size(); ++ui) {
      const Unit& u = units_[ui];
      int passes = 0;
      for (int t = 0; t < trials_; ++t) {
        if (u.bad) continue;  // its item says why (run_trials)
        const Slot& slot = slots[ui * trials_ + t];
        const TrialRun& run = slot.run;
        for (const auto& c : run.calls)
          if (c.outcome.answered) latencies.push_back(c.outcome.latency_ms);  // timeouts are left out
        for (const auto& turn : run.turns) {
          model_latencies.push_back(turn.latency_ms);
          input_tokens += static_cast<double>(turn.input_tokens);
          output_tokens += static_cast<double>(turn.output_tokens);
        }
        tally_servers(run);
        ast += slot.score.tool_match && slot.score.param_match;
        exec += slot.score.exec_pass;
        passes += slot.score.pass;
        agent_errors += run.agent_error;
        if (run.agent_error && first_agent_error_.empty()) first_agent_error_ = run.error;
      }
      if (u.task && setup_.max_tools > 0)  // a bad record: 0
        recall += label_recall(*u.task, prompt_of(*u.task, setup_.max_tools).tools);
      p1 += pass_at_k(trials_, passes, 1);
      pk += pass_at_k(trials_, passes, trials_);
    }
    const double units = static_cast<double>(units_.size()), runs = units * trials_;
    state.record("pass_at_1", p1 / units);
    state.record("pass_at_k", pk / units);
    state.record("ast_accuracy", ast / runs);
    state.record("exec_pass_rate", exec / runs);
    state.record("tasks_per_s", runs / std::max(seconds, 1e-9));
    if (setup_.max_tools > 0) state.record("retrieval_recall", recall / units);
    if (!latencies.empty()) {  // no call reached a server: no latency to report
      state.record("call_latency_p50_ms", percentile(latencies, 0.50));
      state.record("call_latency_p95_ms", percentile(latencies, 0.95));
    }
    state.record("agent_error_rate", agent_errors / runs);
    agent_errors_ = static_cast<std::size_t>(agent_errors);
    if (!model_latencies.empty()) {  // an agent with a model that answered at least once
      state.record("model_latency_p50_ms", percentile(model_latencies, 0.50));
      state.record("model_latency_p95_ms", percentile(model_latencies, 0.95));
      state.record("input_tokens_per_task", input_tokens / runs);
      state.record("output_tokens_per_task", output_tokens / runs);
      if (price_) state.record("cost_usd", cost_usd(*price_, input_tokens, output_tokens));
    }
  }

  // The harness checks itself (one item per task trial, every failure explained), then the environment:
  // a configured server that could not start fails the case (the scores measure the setup, not the
  // agent); servers that tasks name but the config lacks are a dataset problem, warned about.
  void verify(State& state) override {
    const std::size_t expected = units_.size() * static_cast<std::size_t>(trials_);
    if (items_ != expected)
      state.fail("wrote " + std::to_string(items_) + " items for " + std::to_string(expected) + " task trials");
    if (!unexplained_.empty()) state.fail("failing task trial without a reason: " + unexplained_);
    if (!label_defects_.empty())  // a label its own schema refuses fails every agent: say so
      state.warn(count_of(label_defects_.size(), "task") + " of " + count_of(data_.tasks.size(), "task") +
                 " in the dataset have a label that does not satisfy its tool's input_schema (dataset defects, "
                 "scored as they are; first: " + label_defects_.front() + ")");
    if (!placeholders_created_.empty())  // the report must say that files of ours stood in
      state.warn("the fixture lacks " + count_of(placeholders_created_.size(), "file") +
                 " that placeholder files authored by mlsysbench stood in for: " +
                 join({placeholders_created_.begin(), placeholders_created_.end()}, ", "));
    for (const auto& [server, trials] : unknown_servers_)
      state.warn("server '" + server + "' is not in the servers config " + setup_.servers.origin + " (" +
                 count_of(trials, "task trial") + " failed calling it)");
    std::string broken;
    for (const auto& [server, tally] : server_tallies_)
      if (tally.failed > 0)
        broken += (broken.empty() ? "" : "; ") + ("server '" + server + "' could not start in " +
                                                  std::to_string(tally.failed) + " of " +
                                                  count_of(tally.used, "task trial") + ": " + tally.cause);
    if (!broken.empty()) state.fail(broken);
    // Agent errors (the model's API unreachable, a budget used up) are not the model's answers: when every
    // trial ended so, the scores measure nothing and the case fails; some are worth a warning.
    if (agent_errors_ > 0 && agent_errors_ == expected)
      state.fail("every task trial was an agent error (first: " + first_agent_error_ + ")");
    if (agent_errors_ > 0)
      state.warn(count_of(agent_errors_, "task trial") + " of " + std::to_string(expected) +
                 " ended in an agent error (first: " + first_agent_error_ + ")");
  }

  void teardown(State& state) override {
    std::error_code ec;
    fs::remove_all(state.work_dir() / "trials", ec);
    agents_.clear();
    units_.clear();
    data_ = Dataset{};
  }

 private:
  ModelOptions model_options(const State& state, const std::string& agent) const {
    ModelOptions m;
    m.model = state.get_string("model");
    m.base_url = state.get_string("base_url") == "auto" ? "" : state.get_string("base_url");
    m.api_key = api_key(agent, state.get_string("api_key_env"));
    m.temperature = state.get_float("temperature");
    m.max_output_tokens = state.get_int("max_output_tokens");
    m.seed = static_cast<int64_t>(state.seed() >> 33);  // 31 bits: any server's seed type holds it
    m.request_timeout = std::chrono::milliseconds(state.get_int("model_timeout_ms"));
    m.max_retries = static_cast<int>(state.get_int("max_retries"));
    m.retry_base = std::chrono::milliseconds(state.get_int("retry_base_ms"));
    m.task_deadline = setup_.task_deadline;
    m.budget = std::make_shared<RunBudget>(state.get_int("budget_requests"), state.get_int("budget_tokens"));
    return m;
  }

  // Every task trial of the sample (bad records have none: their slots stay empty), slot = unit ·
  // trials + trial. Workers take the next trial in order and check for cancellation before each. Items
  // are added in slot order as soon as every slot before theirs has ended (so the runner stores them
  // while the case runs, and their order does not depend on concurrency); after a cancellation, every
  // ended slot's. `good`: the uuids of the good tasks (a bad record with one of them is keyed by its
  // position instead).
  std::vector<Slot> run_trials(State& state, const std::set<std::string>& good) {
    std::vector<Slot> slots(units_.size() * static_cast<std::size_t>(trials_));
    std::atomic<std::size_t> next{0};
    std::atomic<int64_t> done{0};
    const auto total = static_cast<int64_t>(slots.size());
    std::vector<char> ended(slots.size(), 0), added(slots.size(), 0);
    std::size_t in_order = 0;  // slots [0, in_order) have their items
    const auto add_slot = [&](std::size_t j) {  // with add_mutex_ held
      const Unit& u = units_[j / trials_];
      const int t = static_cast<int>(j % trials_);
      if (u.task) {
        add(state, item_key(u.task->uuid, t), make_item(*u.task, slots[j].run, slots[j].score, keep_results_));
      } else if (u.bad) {
        const bool own_key = !u.bad->uuid.empty() && !good.count(u.bad->uuid);
        add(state, item_key(own_key ? u.bad->uuid : "record-" + std::to_string(u.index), t),
            make_bad_record_item(*u.bad));
      }
      added[j] = 1;
    };
    const auto end_slot = [&](std::size_t j) {
      std::lock_guard lock(add_mutex_);
      ended[j] = 1;
      for (; in_order < slots.size() && ended[in_order]; ++in_order) add_slot(in_order);
    };
    state.progress(0, total);
    const auto work = [&](Agent& agent) {
      for (std::size_t j = next++; j < slots.size() && !state.cancelled(); j = next++) {
        const Unit& u = units_[j / trials_];
        const int t = static_cast<int>(j % trials_);
        if (u.task) {
          const fs::path dir = state.work_dir() / "trials" / (std::to_string(u.index) + "-" + std::to_string(t));
          slots[j].run = run_trial(*u.task, agent, t, setup_, dir);
          slots[j].score = score_trial(*u.task, slots[j].run.calls, slots[j].run.error);
          std::error_code ec;
          fs::remove_all(dir, ec);
        }
        end_slot(j);
        ++done;
      }
    };
    std::vector<std::jthread> workers;
    for (auto& agent : agents_) workers.emplace_back(work, std::ref(*agent));
    while (done.load() < total && !state.cancelled()) {
      state.progress(done.load(), total);
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    workers.clear();  // joins
    if (state.cancelled())  // the slots that ended after one that never did
      for (std::size_t j = in_order; j < slots.size(); ++j)
        if (ended[j] && !added[j]) add_slot(j);
    state.progress(done.load(), total);
    return slots;
  }

  void tally_servers(const TrialRun& run) {
    for (const auto& [server, cause] : run.server_starts) {
      ServerTally& tally = server_tallies_[server];
      ++tally.used;
      if (cause.empty()) continue;
      if (tally.failed++ == 0) tally.cause = cause;
    }
    for (const auto& server : run.unknown_servers) ++unknown_servers_[server];
    for (const auto& p : run.placeholders_created) placeholders_created_.insert(p.generic_string());
  }

  // Called with add_mutex_ held (the trial workers end slots at once), or after they joined.
  void add(State& state, std::string key, nlohmann::json item) {
    if (!item["pass"].get<bool>() && item["reason"].get<std::string>().empty()) unexplained_ = key;
    state.add_item(std::move(key), std::move(item));
    ++items_;
  }

  Dataset data_;
  TrialSetup setup_;
  std::vector<std::unique_ptr<Agent>> agents_;  // one per worker (concurrency)
  std::optional<Price> price_;                  // of the LLM agent's model, when the prices file has it
  std::vector<Unit> units_;
  int trials_ = 1;
  bool keep_results_ = false;  ///< items keep whole call results (axis keep_results)
  std::mutex add_mutex_;
  std::size_t items_ = 0;
  std::string unexplained_;
  std::map<std::string, ServerTally> server_tallies_;   // configured servers, this sample
  std::map<std::string, std::size_t> unknown_servers_;  // server -> task trials that called it
  std::set<std::string> placeholders_created_;           // files the fixture lacked, authored by us
  std::vector<std::string> label_defects_;               // per defective task: its first problem
  std::size_t agent_errors_ = 0;                         // task trials ended by an agent error, this sample
  std::string first_agent_error_;
};

}  // namespace

MLSB_REGISTER_WORKLOAD(ToolbenchWorkload);

}  // namespace mlsb::toolbench
