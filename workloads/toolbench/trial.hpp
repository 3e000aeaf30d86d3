#pragma once
// One task trial: a fresh fixture copy and fresh servers, the agent loop, every tools/call timed.
#include <chrono>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "workloads/toolbench/agent.hpp"
#include "workloads/toolbench/fixture.hpp"
#include "workloads/toolbench/scorer.hpp"
#include "workloads/toolbench/servers.hpp"

namespace mlsb::toolbench {

/// What every trial of a run shares.
struct TrialSetup {
  ServersConfig servers;
  FixtureSource fixture;
  std::vector<Placeholder> placeholders;
  std::filesystem::path memory_seed;  ///< copied to ${memory_file} before servers start; empty = none
  std::chrono::milliseconds call_timeout{30000};  ///< per MCP request (initialize and each tools/call)
  int max_steps = 8;                               ///< tool calls an agent may make per trial
  int64_t max_tools = 0;                           ///< tools offered per task (prompt_of); 0 = all
  std::chrono::milliseconds task_deadline{0};      ///< wall time of the agent loop per trial; 0 = none
};

/// What happened in one trial. `error` is a failure outside any single call (fixture copy, agent
/// exception, step limit, deadline); "" if none. `agent_error` marks the failures that are not a wrong
/// answer: an AgentError (the model's API could not be got past, a run budget used up) or the task
/// deadline.
struct TrialRun {
  std::vector<CallRecord> calls;
  std::vector<ModelTurn> turns;  ///< the agent's model requests (Agent::turns)
  std::string answer;
  std::string error;
  bool agent_error = false;
  /// Each configured server the trial tried to start -> "" when it started and initialised, else why
  /// it could not (its stderr tail included): a broken environment rather than the agent's failure.
  std::map<std::string, std::string> server_starts;
  /// Servers that calls went to but the servers config lacks (the task and config disagree).
  std::set<std::string> unknown_servers;
  /// Placeholder files created in the fixture copy because the fixture lacks them (fixture.hpp).
  std::vector<std::filesystem::path> placeholders_created;
};

/// Runs `task` once with `agent` in `dir` (created; holds root/ = the fixture copy and the server
/// working directory, memory.jsonl, logs/). Servers are started on first use, one per server name, and
/// closed at the end. Placeholders for config strings: ${workdir} (dir/root), ${memory_file},
/// ${trial_dir}, ${config_dir} (the servers config's folder), ${source_dir} (the project source),
/// ${npm_bin} (its mcp/servers/node_modules/.bin). A call the agent marked `invalid` is not sent: its
/// outcome's error is that reason. Never throws for server or agent failures: they become call
/// outcomes or `error`.
TrialRun run_trial(const Task& task, Agent& agent, int trial, const TrialSetup& setup,
                   const std::filesystem::path& dir);

}  // namespace mlsb::toolbench
