#pragma once
// Scoring of one task trial (tool match, AST parameter match, execution) and the pass@k estimator.
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "workloads/toolbench/agent.hpp"
#include "workloads/toolbench/task.hpp"

namespace mlsb::toolbench {

/// One call the runner made: what the agent asked (server resolved) and what came back.
struct CallRecord {
  ToolCall call;
  ToolOutcome outcome;
};

/// Parameter rules in the style of BFCL's AST checker (Gorilla, `ast_checker.py`), applied to the call's
/// arguments against the tool's input_schema and the label's arguments, recursively:
///  - every `required` key is present;
///  - no key outside `properties` (unless `additionalProperties` is true or a schema);
///  - both values are first read by their schema `type`: a string that spells an integer, a number or a
///    boolean ("2", "2.5", "True") for a field of that type is that value (MCPToolBench++ labels write
///    some numbers and booleans as strings; a schema-correct `2` matches the label's "2");
///  - each value has its schema `type` (an integer is accepted for "number": int-as-float, as BFCL
///    accepts an int for a float parameter; "integer" rejects 2.5), and is one of `enum` when given;
///  - values equal the label's after normalisation (normalize_string); numbers compare numerically;
///    arrays element by element in order (BFCL compares lists in order); objects key by key;
///  - an optional key on one side only passes when its value is the schema `default` (BFCL lets an
///    optional parameter be omitted when the answer allows its default).
/// Returns one message per problem ("param 'path': expected \"a\" got \"b\""); empty = match.
std::vector<std::string> check_arguments(const nlohmann::json& schema, const nlohmann::json& expected,
                                         const nlohmann::json& actual);

/// A task's labels checked against their tools' input_schema (check_arguments of each label against
/// itself): "label N (tool): param 'x': ..." for each label that cannot satisfy its own schema, a dataset
/// defect; empty when every label can. Labels whose tool the task does not list are not checked.
std::vector<std::string> label_defects(const Task& task);

/// True when `value` satisfies `schema`'s type, enum and anyOf/oneOf alternatives (not nested members).
bool type_matches(const nlohmann::json& schema, const nlohmann::json& value);

/// True for parameter names holding file paths: containing "path" (any case), "source", "destination".
bool is_path_param(std::string_view key);

/// String normalisation before comparison. BFCL's standardize_string lower-cases and drops spaces and
/// some punctuation; we keep its case-folding and whitespace insensitivity at the ends (trim) but not the
/// punctuation removal, which would merge distinct file names. Paths are also normalised lexically:
/// "./" prefixes, "." segments, repeated and trailing "/" are dropped ("./a//b/" == "a/b"; "./" == ".").
/// Case folding is ASCII only.
std::string normalize_string(std::string_view text, bool path);

/// Outcome of one task trial. pass = tool_match && param_match && exec_pass. `reason` says why it
/// failed ("" on a pass). The scored calls are, for a task with one label (single-step), the last
/// call made, and otherwise every call, in order (MCPToolBench++ scores multi-step tasks' sequences).
struct TrialScore {
  bool tool_match = false;   ///< as many scored calls as labels, each the label's tool or a similar_tool
  bool param_match = false;  ///< tool_match and check_arguments found nothing for every call
  bool exec_pass = false;    ///< at least one call; every scored call returned without isError, with content
  bool pass = false;
  std::string reason;
};

/// Scores `calls` against `task`'s labels. `run_error` (agent or runner failure, "" if none) is added to
/// the reason and fails the trial.
TrialScore score_trial(const Task& task, const std::vector<CallRecord>& calls, const std::string& run_error);

/// Unbiased pass@k estimator 1 - C(n-c, k)/C(n, k) for c passes out of n samples (Chen et al. 2021,
/// "Evaluating Large Language Models Trained on Code", eq. 1), computed stably as
/// 1 - prod_{i=n-c+1..n} (1 - k/i). Throws std::invalid_argument unless 0 <= c <= n and 1 <= k <= n.
double pass_at_k(int n, int c, int k);

}  // namespace mlsb::toolbench
