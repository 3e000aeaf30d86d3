#pragma once
// The per-trial item the store keeps and the report renderer reads. Key: "task/<uuid>/<trial>".
// Shape: {"uuid","category","query","tool" (expected tool(s), comma-separated),
//         "calls":[{"name","arguments","server","latency_ms" (its tools/call wall time, answered or not),
//                   "answered" (the server answered: a result or a JSON-RPC error),"is_error" (no result,
//                   or isError),"result" (its text or error: the first 4 KiB, or all with keep_results)}],
//         "expected":[{"name","arguments"}],
//         "tool_match","param_match","exec_pass","pass","reason",
//         "agent_error" (the trial ended for a reason other than the agent's answers: TrialRun::agent_error),
//         "result_excerpt" (first 4 KiB of the last call's text or error), "latency_ms" (sum of the
//         trial's tools/call times), "answer" (first 4 KiB of the final answer),
//         "model_turns":[{"latency_ms","attempts","input_tokens","output_tokens","stop_reason","calls"}]
//         (LLM agents; empty otherwise), "input_tokens","output_tokens" (sums over the turns)}.
// Every cut text ends "... [cut: K of M bytes shown]" (util/text.hpp utf8_excerpt).
#include <string>

#include <nlohmann/json.hpp>

#include "workloads/toolbench/scorer.hpp"
#include "workloads/toolbench/trial.hpp"

namespace mlsb::toolbench {

/// "task/<uuid>/<trial>".
std::string item_key(const std::string& uuid, int trial);
/// The item of a scored trial; `keep_results`: each call's whole result (else its first 4 KiB).
nlohmann::json make_item(const Task& task, const TrialRun& run, const TrialScore& score, bool keep_results);
/// The item of a record that could not be loaded: every flag false, reason "bad record: ...".
nlohmann::json make_bad_record_item(const RecordError& error);

}  // namespace mlsb::toolbench
