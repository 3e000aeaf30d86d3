#include "workloads/toolbench/item.hpp"

namespace mlsb::toolbench {

using nlohmann::json;

namespace {

// Cuts to at most n bytes at a UTF-8 boundary and replaces invalid UTF-8 (server stderr may hold any
// bytes), so the item always serialises.
std::string clean(const std::string& s, std::size_t n = std::string::npos) {
  std::string cut = s;
  if (cut.size() > n) {
    while (n > 0 && (static_cast<unsigned char>(cut[n]) & 0xC0) == 0x80) --n;
    cut.resize(n);
  }
  return json::parse(json(cut).dump(-1, ' ', false, json::error_handler_t::replace)).get<std::string>();
}

json base_item(const std::string& uuid) {
  return {{"uuid", uuid},        {"category", ""},       {"query", ""},        {"tool", ""},
          {"calls", json::array()}, {"expected", json::array()}, {"tool_match", false}, {"param_match", false},
          {"exec_pass", false},  {"pass", false},        {"reason", ""},       {"result_excerpt", ""},
          {"latency_ms", 0.0},   {"agent_error", false}, {"answer", ""},       {"model_turns", json::array()},
          {"input_tokens", 0},   {"output_tokens", 0}};
}

}  // namespace

std::string item_key(const std::string& uuid, int trial) { return "task/" + uuid + "/" + std::to_string(trial); }

json make_item(const Task& task, const TrialRun& run, const TrialScore& score) {
  json item = base_item(task.uuid);
  item["category"] = task.category;
  item["query"] = task.query;
  std::string tools;
  for (const auto& l : task.labels) {
    tools += (tools.empty() ? "" : ",") + l.name;
    item["expected"].push_back({{"name", l.name}, {"arguments", l.input}});
  }
  item["tool"] = tools;
  double latency = 0;
  for (const auto& c : run.calls) {
    const ToolOutcome& o = c.outcome;
    item["calls"].push_back({{"name", clean(c.call.name)},
                             {"arguments", c.call.arguments},
                             {"server", c.call.server},
                             {"latency_ms", o.latency_ms},
                             {"is_error", !o.error.empty() || o.is_error},
                             {"result", clean(o.error.empty() ? o.text : o.error, 300)}});
    latency += o.latency_ms;
  }
  int64_t input_tokens = 0, output_tokens = 0;
  for (const auto& t : run.turns) {
    item["model_turns"].push_back({{"latency_ms", t.latency_ms}, {"attempts", t.attempts},
                                   {"input_tokens", t.input_tokens}, {"output_tokens", t.output_tokens},
                                   {"stop_reason", clean(t.stop_reason, 100)}, {"calls", t.calls}});
    input_tokens += t.input_tokens;
    output_tokens += t.output_tokens;
  }
  item["input_tokens"] = input_tokens;
  item["output_tokens"] = output_tokens;
  item["agent_error"] = run.agent_error;
  item["answer"] = clean(run.answer, 300);
  if (!run.calls.empty()) {
    const ToolOutcome& last = run.calls.back().outcome;
    item["result_excerpt"] = clean(last.error.empty() ? last.text : last.error, 300);
  }
  item["tool_match"] = score.tool_match;
  item["param_match"] = score.param_match;
  item["exec_pass"] = score.exec_pass;
  item["pass"] = score.pass;
  item["reason"] = clean(score.reason);
  item["latency_ms"] = latency;
  return item;
}

json make_bad_record_item(const RecordError& error) {
  json item = base_item(error.uuid);
  item["category"] = error.category;
  item["reason"] = clean("bad record: " + error.message);
  return item;
}

}  // namespace mlsb::toolbench
