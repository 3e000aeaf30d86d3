#include "workloads/toolbench/tool_retrieval.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <set>

namespace mlsb::toolbench {

std::vector<std::string> word_tokens(std::string_view text) {
  std::vector<std::string> out;
  std::string word;
  auto flush = [&] {
    if (word.size() >= 4 && word.back() == 's' && word[word.size() - 2] != 's') word.pop_back();
    if (!word.empty()) out.push_back(word);
    word.clear();
  };
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (!std::isalnum(c)) {
      flush();
      continue;
    }
    // camelCase: a capital after a lowercase letter starts a word.
    if (std::isupper(c) && i > 0 && std::islower(static_cast<unsigned char>(text[i - 1]))) flush();
    word.push_back(static_cast<char>(std::tolower(c)));
  }
  flush();
  return out;
}

std::vector<RankedTool> rank_tools(std::string_view query, const std::vector<ToolSpec>& tools, int name_weight) {
  constexpr double k1 = 1.2, b = 0.75;
  std::vector<std::map<std::string, int>> tf(tools.size());
  std::vector<double> length(tools.size(), 0);
  std::map<std::string, int> df;
  for (size_t i = 0; i < tools.size(); ++i) {
    for (const auto& w : word_tokens(tools[i].name)) tf[i][w] += name_weight, length[i] += name_weight;
    for (const auto& w : word_tokens(tools[i].description)) ++tf[i][w], ++length[i];
    for (const auto& [w, n] : tf[i]) ++df[w];
  }
  double mean_length = 0;
  for (const double l : length) mean_length += l;
  mean_length = tools.empty() ? 1 : std::max(1.0, mean_length / static_cast<double>(tools.size()));
  const std::vector<std::string> words = word_tokens(query);
  const std::set<std::string> terms(words.begin(), words.end());
  const auto N = static_cast<double>(tools.size());
  std::vector<RankedTool> ranked;
  for (size_t i = 0; i < tools.size(); ++i) {
    double score = 0;
    for (const auto& t : terms) {
      const auto f = tf[i].find(t);
      if (f == tf[i].end()) continue;
      const double n = df[t], idf = std::log(1 + (N - n + 0.5) / (n + 0.5));
      score += idf * f->second * (k1 + 1) / (f->second + k1 * (1 - b + b * length[i] / mean_length));
    }
    ranked.push_back({i, score});
  }
  std::stable_sort(ranked.begin(), ranked.end(), [](const RankedTool& x, const RankedTool& y) { return x.score > y.score; });
  return ranked;
}

double label_recall(const Task& task, const std::vector<ToolSpec>& offered) {
  if (task.labels.empty()) return 1;
  int found = 0;
  for (const auto& l : task.labels)
    found += std::any_of(offered.begin(), offered.end(), [&](const ToolSpec& t) { return l.accepts(t.name); });
  return found / static_cast<double>(task.labels.size());
}

}  // namespace mlsb::toolbench
