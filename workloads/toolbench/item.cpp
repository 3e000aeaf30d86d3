#include "workloads/toolbench/item.hpp"

#include "util/text.hpp"

namespace mlsb::toolbench {

using nlohmann::json;

namespace {

// Bytes of a call's result, the last result and the answer an item keeps (keep_results: all of a result).
constexpr std::size_t kExcerptBytes = 4096;

// At most n bytes, cut at a UTF-8 boundary and marked with the original length (util/text.hpp
// utf8_excerpt); invalid UTF-8 replaced (server stderr may hold any bytes), so the item always serialises.
std::string clean(const std::string& s, std::size_t n = std::string::npos) {
  const std::string cut = n == std::string::npos ? s : utf8_excerpt(s, n);
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

json make_item(const Task& task, const TrialRun& run, const TrialScore& score, bool keep_results) {
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
                             {"answered", o.answered},
                             {"is_error", !o.error.empty() || o.is_error},
                             {"result", clean(o.error.empty() ? o.text : o.error,
                                              keep_results ? std::string::npos : kExcerptBytes)}});
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
  item["answer"] = clean(run.answer, kExcerptBytes);
  if (!run.calls.empty()) {
    const ToolOutcome& last = run.calls.back().outcome;
    item["result_excerpt"] = clean(last.error.empty() ? last.text : last.error, kExcerptBytes);
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
