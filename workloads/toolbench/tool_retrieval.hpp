#pragma once
// Ranking a task's tools against its query with Okapi BM25 (Robertson & Zaragoza, "The Probabilistic
// Relevance Framework: BM25 and Beyond", 2009): the heuristic agent's tool choice, and the retrieval
// that trims a large tool set to a budget.
#include <string>
#include <string_view>
#include <vector>

#include "workloads/toolbench/task.hpp"

namespace mlsb::toolbench {

/// Lowercase ASCII word tokens of `text`: maximal runs of letters and digits; a name's snake_case,
/// kebab-case and camelCase parts become separate words ("readMultiple_files" -> read, multiple, files).
/// A trailing plural "s" is dropped from words of four letters or more ("files" -> "file").
std::vector<std::string> word_tokens(std::string_view text);

struct RankedTool {
  std::size_t index;  ///< into the ranked tool list
  double score;       ///< BM25 score; 0 when no query word occurs in the tool
};

/// The tools ranked by BM25 of `query` over each tool's document: its name's words (counted
/// `name_weight` times, a field boost) and its description's words. IDF is taken over `tools` itself,
/// idf = ln(1 + (N - n + 0.5) / (n + 0.5)); k1 = 1.2, b = 0.75. Highest first; ties keep list order.
std::vector<RankedTool> rank_tools(std::string_view query, const std::vector<ToolSpec>& tools, int name_weight = 3);

/// Retrieval recall of one task: the share of its labelled calls whose tool, or one of its
/// `similar_tools`, is among `offered`; 1 for a task without labels.
double label_recall(const Task& task, const std::vector<ToolSpec>& offered);

}  // namespace mlsb::toolbench
