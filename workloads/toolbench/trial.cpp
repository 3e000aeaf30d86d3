#include "workloads/toolbench/trial.hpp"

#include <algorithm>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>

#include "util/text.hpp"
#include "mcp/command_lookup.hpp"

namespace mlsb::toolbench {

namespace fs = std::filesystem;

namespace {

// Bytes of the end of a server's stderr a failure reason keeps (beside its first error line).
constexpr std::size_t kStderrTailBytes = 600;

// The server's stderr log for a failure reason: the first error line and the end (util/text.hpp).
std::string stderr_of(const fs::path& log) {
  std::ifstream in(log, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  std::string text = s.str();
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return log_excerpt(text, kStderrTailBytes);
}

// The client's message without its own "server 'name': " prefix (ours names the server already).
std::string message_of(const std::exception& e, const std::string& server) {
  const std::string msg = e.what(), prefix = "server '" + server + "': ";
  return msg.rfind(prefix, 0) == 0 ? msg.substr(prefix.size()) : msg;
}

// The servers of one trial, started on first use; a server that failed stays failed. Start outcomes
// and unknown server names go to `run`.
class Servers {
 public:
  Servers(const TrialSetup& setup, Vars vars, fs::path logs, TrialRun& run)
      : setup_(setup), vars_(std::move(vars)), logs_(std::move(logs)), run_(run) {}

  ToolOutcome call(const ToolCall& c) {
    ToolOutcome out;
    mcp::Client* client = get(c.server, out.error);
    if (!client) return out;
    const auto t0 = std::chrono::steady_clock::now();
    try {
      mcp::CallResult r = client->call_tool(c.name, c.arguments);
      out.latency_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      out.answered = true;
      out.is_error = r.is_error;
      out.text = r.text();
      out.content = std::move(r.content);
    } catch (const mcp::RpcError& e) {
      out.latency_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      out.answered = true;
      out.error = "server '" + c.server + "' answered tools/call with error " + std::to_string(e.code) + ": " + e.what();
    } catch (const std::exception& e) {  // transport failure or timeout: the server is unusable now
      out.latency_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      out.error = "server '" + c.server + "': " + message_of(e, c.server) + stderr_note(c.server);
      failed_[c.server] = out.error;
      clients_.erase(c.server);
    }
    return out;
  }

 private:
  mcp::Client* get(const std::string& name, std::string& error) {
    if (auto it = clients_.find(name); it != clients_.end()) return it->second.get();
    if (auto it = failed_.find(name); it != failed_.end()) {
      error = it->second;
      return nullptr;
    }
    auto entry = setup_.servers.servers.find(name);
    if (entry == setup_.servers.servers.end()) {
      error = "server '" + name + "' is not in the servers config " + setup_.servers.origin;
      run_.unknown_servers.insert(name);
    } else {
      try {
        const mcp::ServerSpec spec = instantiate(entry->second, vars_, (logs_ / (name + ".log")).string());
        mcp::ClientOptions opts;
        opts.request_timeout = setup_.call_timeout;
        opts.connect_timeout = setup_.call_timeout;
        auto client = mcp::Client::connect(spec, opts);
        run_.server_starts[name] = "";
        return (clients_[name] = std::move(client)).get();
      } catch (const std::exception& e) {
        const std::string cause = message_of(e, name) + stderr_note(name);
        run_.server_starts[name] = cause;
        error = "cannot start server '" + name + "': " + cause;
      }
    }
    failed_[name] = error;
    return nullptr;
  }

  std::string stderr_note(const std::string& name) const {
    const std::string t = stderr_of(logs_ / (name + ".log"));
    return t.empty() ? "" : " (server stderr: " + t + ")";
  }

  const TrialSetup& setup_;
  Vars vars_;
  fs::path logs_;
  TrialRun& run_;
  std::map<std::string, std::unique_ptr<mcp::Client>> clients_;
  std::map<std::string, std::string> failed_;
};

std::string server_of(const TaskPrompt& prompt, const ToolCall& call) {
  if (!call.server.empty()) return call.server;
  for (const auto& [server, tools] : prompt.server_tools)
    if (std::find(tools.begin(), tools.end(), call.name) != tools.end()) return server;
  return "";
}

}  // namespace

TrialRun run_trial(const Task& task, Agent& agent, int trial, const TrialSetup& setup, const fs::path& dir) {
  TrialRun run;
  const fs::path root = dir / "root", logs = dir / "logs";
  try {
    run.placeholders_created = make_trial_copy(setup.fixture, root, setup.placeholders);
    fs::create_directories(logs);
    if (!setup.memory_seed.empty()) fs::copy_file(setup.memory_seed, dir / "memory.jsonl");
  } catch (const std::exception& e) {
    run.error = std::string("fixture: ") + e.what();
    return run;
  }
  const fs::path config_dir = fs::path(setup.servers.origin).parent_path();
  const fs::path source_dir = MLSB_SOURCE_DIR;
  // The same folder the MCP client searches for bare commands ($MLSB_MCP_SERVERS_BIN overrides it).
  Servers servers(setup,
                  Vars{{"workdir", root.string()},
                       {"memory_file", (dir / "memory.jsonl").string()},
                       {"trial_dir", dir.string()},
                       {"config_dir", config_dir.empty() ? "." : config_dir.string()},
                       {"source_dir", source_dir.string()},
                       {"npm_bin", mcp::bundled_bin_dir().string()}},
                  logs, run);
  const TaskPrompt prompt = prompt_of(task, setup.max_tools);
  const auto start = std::chrono::steady_clock::now();
  const auto past_deadline = [&] {
    return setup.task_deadline.count() > 0 && std::chrono::steady_clock::now() - start >= setup.task_deadline;
  };
  try {
    agent.begin(prompt, trial);
    for (int step = 0;; ++step) {
      if (past_deadline()) {
        run.error = "task deadline of " + std::to_string(setup.task_deadline.count()) + " ms passed";
        run.agent_error = true;
        break;
      }
      AgentAction action = agent.next();
      if (!action.call) {
        run.answer = std::move(action.answer);
        break;
      }
      if (step >= setup.max_steps) {
        run.error = "step limit reached (" + std::to_string(setup.max_steps) + " tool calls)";
        break;
      }
      CallRecord rec{std::move(*action.call), {}};
      rec.call.server = server_of(prompt, rec.call);
      if (!rec.call.invalid.empty()) rec.outcome.error = rec.call.invalid;
      else if (rec.call.server.empty()) rec.outcome.error = "tool '" + rec.call.name + "' is offered by no server of the task";
      else rec.outcome = servers.call(rec.call);
      agent.observe(rec.call, rec.outcome);
      run.calls.push_back(std::move(rec));
    }
  } catch (const AgentError& e) {
    run.error = "agent '" + agent.name() + "': " + e.what();
    run.agent_error = true;
  } catch (const std::exception& e) {
    run.error = "agent '" + agent.name() + "': " + e.what();
  }
  run.turns = agent.turns();
  return run;
}

}  // namespace mlsb::toolbench
