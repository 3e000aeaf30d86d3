#pragma once
// The heuristic agent: no LLM. It calls the tool that ranks first by BM25 of the query over the tools'
// names and descriptions (tool_retrieval.hpp) with arguments read off the query by the tool's input
// schema, then answers. The offline floor every LLM agent should beat; single call, so a multi-step
// task passes only when one call is all it needs.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "workloads/toolbench/agent.hpp"

namespace mlsb::toolbench {

/// What fill_arguments reads from a query: path-like words (holding a '/', or a name with a file
/// extension such as `notes.txt`; "./" is put before a bare relative one), then the folders named by
/// the word before "folder"/"directory"/"dir" ("the data folder" -> ./data; current/project/root -> .),
/// quoted strings ('...', "..." or `...`, typographic quotes too; a glob such as `*.py` counts as
/// one), and whole numbers of up to 15 digits outside those, each with the words around it.
struct QueryFacts {
  std::vector<std::string> paths;
  std::vector<std::string> quoted;
  struct Number {
    int64_t value;
    std::vector<std::string> context;  ///< word_tokens of the 3 words before and after
  };
  std::vector<Number> numbers;
};
QueryFacts read_query(std::string_view query);

/// Arguments for a tool with JSON-Schema `input_schema` (an object schema; anything else gives {}):
///   array of strings whose name says path/file     every path of the query
///   string whose name says path/file/dir/source/destination/target   the paths in query order,
///                       sources (source/src/from/old) first, destinations (destination/dest/target/
///                       to/new) last; a tool's only path property, when required and unfilled, is "."
///   number or integer   repeatedly, the (property, unused number) pair whose number's context shares
///                       most words with the property's name and description (stopwords aside; a
///                       number sharing none goes only to a required property); written as an integer
///   other string        the next unused quoted string (properties in name order)
/// Booleans, objects and other arrays are left out, as is anything the query does not supply.
nlohmann::json fill_arguments(const nlohmann::json& input_schema, const QueryFacts& facts);

class HeuristicAgent final : public Agent {
 public:
  std::string name() const override { return "heuristic"; }
  void begin(const TaskPrompt& task, int trial) override;
  AgentAction next() override;
  void observe(const ToolCall&, const ToolOutcome&) override {}

 private:
  std::vector<ToolCall> plan_;
  std::size_t step_ = 0;
};

}  // namespace mlsb::toolbench
