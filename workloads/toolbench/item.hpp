#pragma once
// The per-trial item the store keeps and the report renderer reads. Key: "task/<uuid>/<trial>".
// Shape: {"uuid","category","query","tool" (expected tool(s), comma-separated),
//         "calls":[{"name","arguments","server"}], "expected":[{"name","arguments"}],
//         "tool_match","param_match","exec_pass","pass","reason",
//         "result_excerpt" (first 300 bytes of the last call's text or error), "latency_ms" (sum of the
//         trial's tools/call round trips)}.
#include <string>

#include <nlohmann/json.hpp>

#include "workloads/toolbench/scorer.hpp"
#include "workloads/toolbench/trial.hpp"

namespace mlsb::toolbench {

/// "task/<uuid>/<trial>".
std::string item_key(const std::string& uuid, int trial);
/// The item of a scored trial.
nlohmann::json make_item(const Task& task, const TrialRun& run, const TrialScore& score);
/// The item of a record that could not be loaded: every flag false, reason "bad record: ...".
nlohmann::json make_bad_record_item(const RecordError& error);

}  // namespace mlsb::toolbench
