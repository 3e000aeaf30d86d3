#include "workloads/toolbench/agents/heuristic_agent.hpp"

#include <algorithm>
#include <cctype>
#include <set>

#include "util/text.hpp"
#include "workloads/toolbench/tool_retrieval.hpp"

namespace mlsb::toolbench {

namespace {

bool is_space(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }
bool is_alnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

// `w` without the sentence punctuation around it.
std::string_view trim_punctuation(std::string_view w) {
  while (!w.empty() && std::string_view("([{<\"'`").find(w.front()) != std::string_view::npos) w.remove_prefix(1);
  while (!w.empty() && std::string_view(".,;:!?)]}>\"'`").find(w.back()) != std::string_view::npos) w.remove_suffix(1);
  return w;
}

bool all_digits(std::string_view w) {
  return !w.empty() && std::all_of(w.begin(), w.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

// A word with a '/' in it, or name.ext (not a URL or a glob) (an extension of 1 to 5 letters or digits, not all digits).
bool path_like(std::string_view w) {
  if (w.empty() || w.find("://") != std::string_view::npos || w.find('*') != std::string_view::npos) return false;
  if (w.find('/') != std::string_view::npos) return true;
  const size_t dot = w.rfind('.');
  if (dot == std::string_view::npos || dot == 0 || dot + 1 == w.size() || w.size() - dot - 1 > 5) return false;
  const std::string_view ext = w.substr(dot + 1);
  return std::all_of(ext.begin(), ext.end(), is_alnum) && !all_digits(ext) && !all_digits(w.substr(0, dot));
}

std::string as_path(std::string_view w) {
  if (w.front() == '/' || w.front() == '.' || w.front() == '~') return std::string(w);
  return "./" + std::string(w);
}

const std::set<std::string>& stopwords() {
  static const std::set<std::string> s = {"a",  "an",   "the", "of",   "to",   "in",  "on", "and", "or",
                                          "is", "are",  "if",  "by",   "for",  "with", "it", "thi", "that",
                                          "be", "from", "at",  "only", "provided"};
  return s;
}

std::set<std::string> content_words(std::string_view text) {
  std::set<std::string> out;
  for (auto& w : word_tokens(text))
    if (!stopwords().count(w)) out.insert(std::move(w));
  return out;
}

bool is_name_char(char c) { return is_alnum(c) || c == '_' || c == '-'; }

const std::set<std::string>& folder_words() {
  static const std::set<std::string> s = {"folder", "directory", "dir"};
  return s;
}

// Which of a tool's path properties takes the query's first path: sources first, destinations last.
int path_order(std::string_view property) {
  for (const auto& w : word_tokens(property)) {
    if (w == "source" || w == "src" || w == "from" || w == "old") return 0;
    if (w == "destination" || w == "dest" || w == "target" || w == "to" || w == "new") return 2;
  }
  return 1;
}

bool names_a_path(std::string_view property) {
  static const std::set<std::string> words = {"path",   "file",        "dir",    "directory", "folder",
                                              "source", "destination", "target", "src",       "dest"};
  for (const auto& w : word_tokens(property))
    if (words.count(w)) return true;
  return false;
}

std::string type_of(const nlohmann::json& schema) {
  if (!schema.is_object() || !schema.contains("type")) return "";
  const auto& t = schema["type"];
  if (t.is_string()) return t.get<std::string>();
  if (t.is_array())  // ["string", "null"]: the first non-null type
    for (const auto& x : t)
      if (x.is_string() && x.get<std::string>() != "null") return x.get<std::string>();
  return "";
}

}  // namespace

QueryFacts read_query(std::string_view raw) {
  // Typographic quotes (U+201C/D, U+2018/9) read as their ASCII ones.
  std::string typed(raw);
  for (const auto& [curly, plain] : {std::pair<std::string_view, char>{"\u201c", '"'}, {"\u201d", '"'},
                                     {"\u2018", '\''}, {"\u2019", '\''}})
    for (size_t at; (at = typed.find(curly)) != std::string::npos;) typed.replace(at, curly.size(), 1, plain);
  const std::string_view query = typed;
  QueryFacts facts;
  std::string rest;  // the query with quoted strings blanked out (quoted paths unquoted)
  for (size_t i = 0; i < query.size();) {
    const char q = query[i];
    const bool opens = (q == '\'' || q == '"' || q == '`') && (i == 0 || is_space(query[i - 1]) || query[i - 1] == '(');
    size_t close = std::string_view::npos;
    if (opens)
      for (size_t j = i + 1; j < query.size(); ++j)
        if (query[j] == q && (j + 1 == query.size() || !is_alnum(query[j + 1]))) {
          close = j;
          break;
        }
    if (close == std::string_view::npos) {
      rest.push_back(query[i++]);
      continue;
    }
    const std::string_view inner = query.substr(i + 1, close - i - 1);
    const bool a_path = path_like(inner) && inner.find(' ') == std::string_view::npos;
    if (!inner.empty() && !a_path) facts.quoted.emplace_back(inner);
    rest += ' ';
    if (a_path) rest += inner, rest += ' ';  // read in its place among the words below
    i = close + 1;
  }
  std::vector<std::string_view> words;
  std::vector<std::string> named_folders;
  for (size_t i = 0; i < rest.size();) {
    while (i < rest.size() && is_space(rest[i])) ++i;
    size_t j = i;
    while (j < rest.size() && !is_space(rest[j])) ++j;
    if (j > i) words.emplace_back(rest.data() + i, j - i);
    i = j;
  }
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string_view w = trim_punctuation(words[i]);
    if (w.empty()) continue;
    if (w.find('*') != std::string_view::npos) {
      facts.quoted.emplace_back(w);
    } else if (all_digits(w)) {
      if (w.size() > 15) continue;  // no plausible count
      QueryFacts::Number n{std::stoll(std::string(w)), {}};
      for (size_t k = i >= 3 ? i - 3 : 0; k < std::min(words.size(), i + 4); ++k)
        if (k != i)
          for (auto& t : word_tokens(words[k])) n.context.push_back(std::move(t));
      facts.numbers.push_back(std::move(n));
    } else if (path_like(w)) {
      facts.paths.push_back(as_path(w));
    } else if (i + 1 < words.size() && folder_words().count(ascii_lower(trim_punctuation(words[i + 1]))) &&
               std::all_of(w.begin(), w.end(), is_name_char)) {
      const std::string name = ascii_lower(w);  // "the data folder"; "the current folder" is the root
      if (name == "current" || name == "project" || name == "root") named_folders.emplace_back(".");
      else if (!stopwords().count(name) && name != "new" && name != "parent") named_folders.push_back(as_path(w));
    }
  }
  for (auto& f : named_folders)  // after the explicit paths, which are more specific
    if (std::find(facts.paths.begin(), facts.paths.end(), f) == facts.paths.end()) facts.paths.push_back(std::move(f));
  return facts;
}

nlohmann::json fill_arguments(const nlohmann::json& input_schema, const QueryFacts& facts) {
  nlohmann::json args = nlohmann::json::object();
  if (!input_schema.is_object() || !input_schema.contains("properties") || !input_schema["properties"].is_object())
    return args;
  const auto& props = input_schema["properties"];
  std::set<std::string> required;
  if (input_schema.contains("required") && input_schema["required"].is_array())
    for (const auto& r : input_schema["required"])
      if (r.is_string()) required.insert(r.get<std::string>());
  size_t next_path = 0, next_quoted = 0;
  std::vector<std::string> numeric, path_props;  // number and integer properties; string path ones
  for (const auto& [name, schema] : props.items()) {
    const std::string type = type_of(schema);
    if (type == "array" && names_a_path(name) && schema.contains("items") && type_of(schema["items"]) == "string") {
      if (!facts.paths.empty()) args[name] = facts.paths;
    } else if (type == "string" && names_a_path(name)) {
      path_props.push_back(name);
    } else if (type == "string") {
      if (next_quoted < facts.quoted.size()) args[name] = facts.quoted[next_quoted++];
    } else if (type == "number" || type == "integer") {
      numeric.push_back(name);
    }
  }
  std::stable_sort(path_props.begin(), path_props.end(),
                   [](const std::string& a, const std::string& b) { return path_order(a) < path_order(b); });
  for (const auto& name : path_props) {
    if (next_path < facts.paths.size()) args[name] = facts.paths[next_path++];
    else if (required.count(name) && path_props.size() == 1) args[name] = ".";  // the fixture's root
  }
  // Numbers to properties: repeatedly the (property, number) pair whose words overlap most.
  std::vector<std::set<std::string>> described;
  for (const auto& name : numeric) {
    std::set<std::string> words = content_words(name);
    if (props[name].contains("description") && props[name]["description"].is_string())
      for (auto& w : content_words(props[name]["description"].get<std::string>())) words.insert(w);
    described.push_back(std::move(words));
  }
  std::vector<bool> number_used(facts.numbers.size(), false), property_done(numeric.size(), false);
  for (;;) {
    int best = -1;
    size_t best_p = 0, best_n = 0;
    for (size_t p = 0; p < numeric.size(); ++p) {
      if (property_done[p]) continue;
      for (size_t n = 0; n < facts.numbers.size(); ++n) {
        if (number_used[n]) continue;
        int overlap = 0;
        for (const auto& w : facts.numbers[n].context) overlap += described[p].count(w) ? 1 : 0;
        if (overlap == 0 && !required.count(numeric[p])) continue;
        if (overlap > best) best = overlap, best_p = p, best_n = n;
      }
    }
    if (best < 0) break;
    property_done[best_p] = true, number_used[best_n] = true;
    args[numeric[best_p]] = facts.numbers[best_n].value;
  }
  return args;
}

void HeuristicAgent::begin(const TaskPrompt& task, int) {
  plan_.clear();
  step_ = 0;
  const std::vector<RankedTool> ranked = rank_tools(task.query, task.tools);
  if (ranked.empty() || ranked.front().score <= 0) return;
  const ToolSpec& tool = task.tools[ranked.front().index];
  plan_.push_back({tool.name, fill_arguments(tool.input_schema, read_query(task.query)), "", ""});
}

AgentAction HeuristicAgent::next() {
  if (step_ < plan_.size()) return {plan_[step_++], ""};
  return {std::nullopt, plan_.empty() ? "no tool matches the query" : "done"};
}

}  // namespace mlsb::toolbench
