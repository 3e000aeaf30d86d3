// The heuristic agent's parts: word tokens, BM25 tool ranking, what it reads off a query, and the
// arguments it fills from a tool's input schema; then a whole episode.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "workloads/toolbench/agent.hpp"
#include "workloads/toolbench/agents/heuristic_agent.hpp"
#include "workloads/toolbench/tool_retrieval.hpp"

namespace mlsb::toolbench {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;

ToolSpec tool(const std::string& name, const std::string& description, const std::string& schema = "{}") {
  return {name, description, json::parse(schema)};
}

std::vector<ToolSpec> filesystem_tools() {
  return {
      tool("read_text_file", "Read the complete contents of a file as text. Use head or tail for the first or last N lines.",
           R"({"type": "object", "properties": {"path": {"type": "string"},
               "head": {"type": "number", "description": "If provided, returns only the first N lines of the file"},
               "tail": {"type": "number", "description": "If provided, returns only the last N lines of the file"}},
               "required": ["path"]})"),
      tool("write_file", "Create a new file or completely overwrite an existing file with new content.",
           R"({"type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
               "required": ["path", "content"]})"),
      tool("move_file", "Move or rename files and directories.",
           R"({"type": "object", "properties": {"source": {"type": "string"}, "destination": {"type": "string"}},
               "required": ["source", "destination"]})"),
      tool("list_directory", "Get a detailed listing of all files and directories in a specified path.",
           R"({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]})"),
      tool("read_multiple_files", "Read the contents of multiple files simultaneously.",
           R"({"type": "object", "properties": {"paths": {"type": "array", "items": {"type": "string"}}},
               "required": ["paths"]})"),
  };
}

TEST(ToolRetrieval, WordTokensSplitNamesAndDropPlurals) {
  EXPECT_THAT(word_tokens("readMultiple_files"), ElementsAre("read", "multiple", "file"));
  EXPECT_THAT(word_tokens("list-directory, 'Sizes' of ./src/a.py"),
              ElementsAre("list", "directory", "size", "of", "src", "a", "py"));
  EXPECT_THAT(word_tokens("class bus"), ElementsAre("class", "bus"));  // "ss" and short words kept
  EXPECT_TRUE(word_tokens(" ,; ").empty());
}

TEST(ToolRetrieval, RanksTheToolWhoseNameAndDescriptionMatchFirst) {
  const auto tools = filesystem_tools();
  auto top = [&](const std::string& q) { return tools[rank_tools(q, tools).front().index].name; };
  EXPECT_EQ(top("Move notes.txt to archive/notes.txt"), "move_file");
  EXPECT_EQ(top("Write a new file hello.md with the content 'hi'"), "write_file");
  EXPECT_EQ(top("List the directory src"), "list_directory");
  EXPECT_EQ(top("Read the contents of a.txt and b.txt simultaneously"), "read_multiple_files");
  const auto none = rank_tools("zzz qqq", tools);
  ASSERT_EQ(none.size(), tools.size());
  for (size_t i = 0; i < none.size(); ++i) {
    EXPECT_EQ(none[i].index, i);
    EXPECT_EQ(none[i].score, 0.0);
  }
  EXPECT_TRUE(rank_tools("read", {}).empty());
}

TEST(ToolRetrieval, NameWordsWeighMoreThanDescriptionWords) {
  // "tree" once in the short tool's description, once in the long tool's name: counted once, the
  // shorter document wins; with the name's words counted three times, the named one does.
  const std::vector<ToolSpec> tools = {
      tool("list_files", "Lists files; see directory_tree."),
      tool("directory_tree", "Recursive listing of files and folders as a JSON structure with names, types and children.")};
  EXPECT_EQ(rank_tools("tree", tools, 1).front().index, 0u);
  EXPECT_EQ(rank_tools("tree", tools).front().index, 1u);
}

TEST(ToolRetrieval, MaxToolsOffersTheTopRankedAndRecallCountsSimilarTools) {
  Task task;
  task.uuid = "u";
  task.query = "Move notes.txt to old/notes.txt and list the directory";
  task.tools = filesystem_tools();
  task.server_tools = {{"filesystem", {"read_text_file", "write_file", "move_file", "list_directory", "read_multiple_files"}}};
  Label move;
  move.name = "move_file";
  Label read;
  read.name = "read_file";
  read.similar_tools = {"read_text_file"};
  task.labels = {move, read};
  const TaskPrompt two = prompt_of(task, 2);
  ASSERT_EQ(two.tools.size(), 2u);
  EXPECT_EQ(two.tools[0].name, "list_directory");  // rank order: "list" and "directory" both match
  EXPECT_EQ(two.tools[1].name, "move_file");
  EXPECT_THAT(two.server_tools.at("filesystem"), ElementsAre("move_file", "list_directory"));  // config order
  EXPECT_EQ(label_recall(task, two.tools), 0.5);  // read_file (nor read_text_file) not offered
  EXPECT_EQ(label_recall(task, task.tools), 1.0);  // read_text_file stands in for read_file
  for (const int64_t all : {0, 5, 9}) EXPECT_EQ(prompt_of(task, all).tools.size(), 5u) << all;
  task.labels.clear();
  EXPECT_EQ(label_recall(task, {}), 1.0);
}

TEST(HeuristicQuery, ReadsPathsQuotedStringsAndNumbers) {
  const QueryFacts f = read_query("Copy \"hello world\" into notes/a.txt, then 'b.md' and the data folder; top 12 lines of *.py.");
  EXPECT_THAT(f.paths, ElementsAre("./notes/a.txt", "./b.md", "./data"));
  EXPECT_THAT(f.quoted, ElementsAre("hello world", "*.py"));
  ASSERT_EQ(f.numbers.size(), 1u);
  EXPECT_EQ(f.numbers[0].value, 12);
  EXPECT_THAT(f.numbers[0].context, ElementsAre("data", "folder", "top", "line", "of", "py"));
  // Apostrophes are not quotes; version numbers and URLs are not paths; the current folder is the root.
  EXPECT_THAT(read_query("Search src for '*.py' files").quoted, ElementsAre("*.py"));
  // Typographic quotes quote; numbers too long to be counts are not read.
  const QueryFacts curly = read_query("Read \u201cnotes/todo.txt\u201d and \u2018now\u2019, the last "
                                      "1000000000000000000000000000000 lines or " + std::string(400, '9'));
  EXPECT_THAT(curly.paths, ElementsAre("./notes/todo.txt"));
  EXPECT_THAT(curly.quoted, ElementsAre("now"));
  EXPECT_TRUE(curly.numbers.empty());
  const QueryFacts g = read_query("It's the user's file /etc/hosts, see http://x.org and v1.2 in the current folder");
  EXPECT_THAT(g.paths, ElementsAre("/etc/hosts", "."));
  EXPECT_TRUE(g.quoted.empty());
  EXPECT_TRUE(g.numbers.empty());
}

TEST(HeuristicArguments, FillsTheSchemaFromTheQuery) {
  const auto tools = filesystem_tools();
  EXPECT_EQ(fill_arguments(tools[0].input_schema, read_query("Show the first 5 lines of docs/guide.md")),
            json::parse(R"({"path": "./docs/guide.md", "head": 5})"));
  EXPECT_EQ(fill_arguments(tools[0].input_schema, read_query("What are the last 3 lines of data/r.csv?")),
            json::parse(R"({"path": "./data/r.csv", "tail": 3})"));
  // Sources before destinations, whatever the schema's key order.
  EXPECT_EQ(fill_arguments(tools[2].input_schema, read_query("Move data/r.csv into archive/r_2024.csv")),
            json::parse(R"({"source": "./data/r.csv", "destination": "./archive/r_2024.csv"})"));
  EXPECT_EQ(fill_arguments(tools[1].input_schema, read_query("Write \"hi there\" to notes.md")),
            json::parse(R"({"path": "./notes.md", "content": "hi there"})"));
  EXPECT_EQ(fill_arguments(tools[4].input_schema, read_query("Read a/x.txt and a/y.txt")),
            json::parse(R"({"paths": ["./a/x.txt", "./a/y.txt"]})"));
  // A tool's only, required path defaults to the root; a number nothing asks for is left out.
  EXPECT_EQ(fill_arguments(tools[3].input_schema, read_query("List everything, 3 times")), json::parse(R"({"path": "."})"));
  // What the query lacks stays out; non-object schemas give {}.
  EXPECT_EQ(fill_arguments(tools[2].input_schema, read_query("Move it over there")), json::object());
  EXPECT_EQ(fill_arguments(json::array(), read_query("a.txt")), json::object());
  EXPECT_EQ(fill_arguments(json::parse(R"({"properties": 3})"), read_query("a.txt")), json::object());
}

TEST(HeuristicAgent, CallsTheTopToolOnceThenAnswers) {
  HeuristicAgent agent;
  TaskPrompt task{"u1", "filesystem", "Move notes.txt to old/notes.txt", filesystem_tools(), {}};
  agent.begin(task, 0);
  const AgentAction first = agent.next();
  ASSERT_TRUE(first.call.has_value());
  EXPECT_EQ(first.call->name, "move_file");
  EXPECT_EQ(first.call->arguments, json::parse(R"({"source": "./notes.txt", "destination": "./old/notes.txt"})"));
  EXPECT_FALSE(agent.next().call.has_value());
  // A query no tool's words match: no call at all.
  task.query = "zzz";
  agent.begin(task, 1);
  const AgentAction none = agent.next();
  EXPECT_FALSE(none.call.has_value());
  EXPECT_EQ(none.answer, "no tool matches the query");
  EXPECT_EQ(make_agent("heuristic", {})->name(), "heuristic");
}

}  // namespace
}  // namespace mlsb::toolbench
