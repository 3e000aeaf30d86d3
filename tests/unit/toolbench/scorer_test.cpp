#include <gtest/gtest.h>

#include "workloads/toolbench/scorer.hpp"

namespace mlsb::toolbench {
namespace {

using nlohmann::json;

const json kSchema = json::parse(R"({
  "type": "object",
  "properties": {
    "path": {"type": "string"},
    "head": {"type": "number"},
    "count": {"type": "integer"},
    "dryRun": {"type": "boolean", "default": false},
    "sortBy": {"type": "string", "enum": ["name", "size"], "default": "name"},
    "paths": {"type": "array", "items": {"type": "string"}},
    "edits": {"type": "array", "items": {"type": "object",
              "properties": {"oldText": {"type": "string"}, "newText": {"type": "string"}},
              "required": ["oldText", "newText"]}}
  },
  "required": ["path"]
})");

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += x + "\n";
  return s;
}

TEST(ToolbenchScorerAst, IdenticalArgumentsMatch) {
  const json a = {{"path", "a.txt"}, {"paths", {"x", "y"}}, {"edits", {{{"oldText", "A"}, {"newText", "B"}}}}};
  EXPECT_TRUE(check_arguments(kSchema, a, a).empty());
}

TEST(ToolbenchScorerAst, RequiredParamMustBePresent) {
  const auto p = check_arguments(kSchema, {{"path", "a"}}, json::object());
  ASSERT_FALSE(p.empty());
  EXPECT_NE(joined(p).find("param 'path': required but missing"), std::string::npos) << joined(p);
}

TEST(ToolbenchScorerAst, UnexpectedKeyIsRejected) {
  const auto p = check_arguments(kSchema, {{"path", "a"}}, {{"path", "a"}, {"recursive", true}});
  EXPECT_NE(joined(p).find("param 'recursive': unexpected"), std::string::npos) << joined(p);
  json open = kSchema;
  open["additionalProperties"] = true;
  EXPECT_NE(joined(check_arguments(open, {{"path", "a"}}, {{"path", "a"}, {"recursive", true}})).find("not in the label"),
            std::string::npos);
  EXPECT_TRUE(check_arguments(open, {{"path", "a"}, {"recursive", true}}, {{"path", "a"}, {"recursive", true}}).empty());
}

TEST(ToolbenchScorerAst, TypesFollowTheSchema) {
  // int-as-float: an integer is a valid "number".
  EXPECT_TRUE(check_arguments(kSchema, {{"path", "a"}, {"head", 5.0}}, {{"path", "a"}, {"head", 5}}).empty());
  EXPECT_TRUE(check_arguments(kSchema, {{"path", "a"}, {"head", 5}}, {{"path", "a"}, {"head", 5.0}}).empty());
  // ... but a float is not an "integer", and a string is not a number.
  auto p = check_arguments(kSchema, {{"path", "a"}, {"count", 2}}, {{"path", "a"}, {"count", 2.5}});
  EXPECT_NE(joined(p).find("param 'count': expected integer, got number 2.5"), std::string::npos) << joined(p);
  p = check_arguments(kSchema, {{"path", "a"}, {"head", 5}}, {{"path", "a"}, {"head", "five"}});
  EXPECT_NE(joined(p).find("param 'head': expected number, got string"), std::string::npos) << joined(p);
  p = check_arguments(kSchema, {{"path", "a"}, {"dryRun", true}}, {{"path", "a"}, {"dryRun", "yes"}});
  EXPECT_NE(joined(p).find("param 'dryRun': expected boolean"), std::string::npos) << joined(p);
  p = check_arguments(kSchema, {{"path", "a"}, {"count", 2}}, {{"path", "a"}, {"count", "2.5"}});
  EXPECT_NE(joined(p).find("param 'count': expected integer, got string"), std::string::npos) << joined(p);
  p = check_arguments(kSchema, {{"path", "a"}, {"sortBy", "size"}}, {{"path", "a"}, {"sortBy", "date"}});
  EXPECT_NE(joined(p).find("param 'sortBy': expected one of"), std::string::npos) << joined(p);
}

// MCPToolBench++ labels of some categories write numbers and booleans as strings ("2", "True"): both
// sides are read by the field's schema type, so the label's "2" and a model's schema-correct 2 match,
// and the oracle replaying the label passes.
TEST(ToolbenchScorerAst, ValuesAreReadByTheSchemaTypeBeforeComparing) {
  const json label = {{"path", "a"}, {"count", "2"}, {"head", "1.5"}, {"dryRun", "True"}};
  EXPECT_TRUE(check_arguments(kSchema, label, {{"path", "a"}, {"count", 2}, {"head", 1.5}, {"dryRun", true}}).empty());
  EXPECT_TRUE(check_arguments(kSchema, label, label).empty());
  const auto p = check_arguments(kSchema, label, {{"path", "a"}, {"count", 3}, {"head", 1.5}, {"dryRun", true}});
  EXPECT_NE(joined(p).find("param 'count': expected 2 got 3"), std::string::npos) << joined(p);
  // A string field keeps its string: "2" is not 2 there.
  EXPECT_FALSE(check_arguments(kSchema, {{"path", "2"}}, {{"path", 2}}).empty());
}

// A label that its own tool's schema refuses is a dataset defect, found before any agent runs.
TEST(ToolbenchScorerAst, LabelDefectsAreFound) {
  Task t;
  t.uuid = "d";
  t.tools = {{"read_text_file", "", kSchema}};
  Label good;
  good.name = "read_text_file";
  good.input = {{"path", "a"}, {"count", "2"}};
  Label bad = good;
  bad.input = {{"path", "a"}, {"count", "two"}};
  t.labels = {good};
  EXPECT_TRUE(label_defects(t).empty());
  t.labels = {good, bad};
  const auto d = label_defects(t);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].rfind("label 2 (read_text_file): param 'count': expected integer, got string", 0), 0u) << d[0];
}

TEST(ToolbenchScorerAst, TypeMatchesCoversKeywords) {
  EXPECT_TRUE(type_matches(json::parse(R"({"type": ["string", "null"]})"), nullptr));
  EXPECT_FALSE(type_matches(json::parse(R"({"type": ["string", "null"]})"), 3));
  EXPECT_TRUE(type_matches(json::parse(R"({"anyOf": [{"type": "string"}, {"type": "integer"}]})"), 3));
  EXPECT_FALSE(type_matches(json::parse(R"({"anyOf": [{"type": "string"}, {"type": "integer"}]})"), 3.5));
  EXPECT_TRUE(type_matches(json::object(), json::array()));
}

TEST(ToolbenchScorerAst, ValuesMustEqualTheLabel) {
  const auto p = check_arguments(kSchema, {{"path", "docs/a.md"}}, {{"path", "docs/b.md"}});
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0], "param 'path': expected \"docs/a.md\" got \"docs/b.md\"");
  EXPECT_FALSE(check_arguments(kSchema, {{"path", "a"}, {"head", 5}}, {{"path", "a"}, {"head", 6}}).empty());
  EXPECT_FALSE(check_arguments(kSchema, {{"path", "a"}, {"dryRun", true}}, {{"path", "a"}, {"dryRun", false}}).empty());
}

TEST(ToolbenchScorerAst, StringsAreTrimmedAndCaseFolded) {
  const json schema = json::parse(R"({"type":"object","properties":{"query":{"type":"string"}}})");
  EXPECT_TRUE(check_arguments(schema, {{"query", "Wind Speed"}}, {{"query", "  wind speed\n"}}).empty());
  EXPECT_FALSE(check_arguments(schema, {{"query", "wind speed"}}, {{"query", "windspeed"}}).empty());
  EXPECT_FALSE(check_arguments(schema, {{"query", "./a"}}, {{"query", "a"}}).empty());  // not a path param
}

TEST(ToolbenchScorerAst, PathsAreNormalisedLexically) {
  EXPECT_TRUE(check_arguments(kSchema, {{"path", "./test_project_root/data/"}}, {{"path", "test_project_root//data"}}).empty());
  EXPECT_TRUE(check_arguments(kSchema, {{"path", "./"}}, {{"path", "."}}).empty());
  EXPECT_TRUE(check_arguments(kSchema, {{"path", "a"}, {"paths", {"./x/y.txt"}}}, {{"path", "a"}, {"paths", {"x/./y.txt"}}}).empty());
  EXPECT_FALSE(check_arguments(kSchema, {{"path", "/data"}}, {{"path", "data"}}).empty());  // absolute stays absolute
  EXPECT_FALSE(check_arguments(kSchema, {{"path", "a/b"}}, {{"path", "ab"}}).empty());
  EXPECT_EQ(normalize_string(" ./A//b/./C/ ", true), "a/b/c");
  EXPECT_EQ(normalize_string("/", true), "/");
  EXPECT_TRUE(is_path_param("path"));
  EXPECT_TRUE(is_path_param("filePaths"));
  EXPECT_TRUE(is_path_param("destination"));
  EXPECT_FALSE(is_path_param("content"));
}

TEST(ToolbenchScorerAst, ArraysCompareInOrderAndBySize) {
  const json e = {{"path", "a"}, {"paths", {"x", "y"}}};
  auto p = check_arguments(kSchema, e, {{"path", "a"}, {"paths", {"y", "x"}}});
  EXPECT_EQ(p.size(), 2u) << joined(p);
  EXPECT_NE(joined(p).find("param 'paths[0]'"), std::string::npos);
  p = check_arguments(kSchema, e, {{"path", "a"}, {"paths", {"x"}}});
  EXPECT_NE(joined(p).find("param 'paths': expected 2 items"), std::string::npos) << joined(p);
}

TEST(ToolbenchScorerAst, NestedObjectsAreCheckedRecursively) {
  const json e = {{"path", "a"}, {"edits", {{{"oldText", "A"}, {"newText", "B"}}}}};
  auto p = check_arguments(kSchema, e, {{"path", "a"}, {"edits", {{{"oldText", "A"}, {"newText", "C"}}}}});
  EXPECT_NE(joined(p).find("param 'edits[0].newText': expected \"B\" got \"C\""), std::string::npos) << joined(p);
  p = check_arguments(kSchema, e, {{"path", "a"}, {"edits", {{{"oldText", "A"}}}}});
  EXPECT_NE(joined(p).find("param 'edits[0].newText': required but missing"), std::string::npos) << joined(p);
  p = check_arguments(kSchema, e, {{"path", "a"}, {"edits", {{{"oldText", "A"}, {"newText", "B"}, {"x", 1}}}}});
  EXPECT_NE(joined(p).find("param 'edits[0].x': unexpected"), std::string::npos) << joined(p);
}

TEST(ToolbenchScorerAst, OptionalParamsMayBeOmittedOnlyAtTheirDefault) {
  EXPECT_TRUE(check_arguments(kSchema, {{"path", "a"}, {"sortBy", "name"}}, {{"path", "a"}}).empty());
  EXPECT_TRUE(check_arguments(kSchema, {{"path", "a"}}, {{"path", "a"}, {"dryRun", false}}).empty());
  auto p = check_arguments(kSchema, {{"path", "a"}, {"sortBy", "size"}}, {{"path", "a"}});
  EXPECT_NE(joined(p).find("param 'sortBy': missing, expected \"size\""), std::string::npos) << joined(p);
  p = check_arguments(kSchema, {{"path", "a"}}, {{"path", "a"}, {"head", 3}});
  EXPECT_NE(joined(p).find("param 'head': not in the label, got 3"), std::string::npos) << joined(p);
}

TEST(ToolbenchScorerAst, ArgumentsMustBeAnObject) {
  EXPECT_FALSE(check_arguments(kSchema, {{"path", "a"}}, json::array()).empty());
}

Task one_label_task() {
  Task t;
  t.uuid = "u";
  t.tools = {{"read_text_file", "", kSchema}, {"read_file", "", kSchema}};
  Label l;
  l.name = "read_text_file";
  l.server = "filesystem";
  l.similar_tools = {"read_file"};
  l.input = {{"path", "./a.txt"}};
  t.labels = {l};
  return t;
}

Task two_label_task() {
  Task t = one_label_task();
  Label second = t.labels[0];
  second.name = "write_file";
  second.similar_tools.clear();
  second.input = {{"path", "./b.txt"}};
  t.tools.push_back({"write_file", "", kSchema});
  t.labels.push_back(second);
  return t;
}

CallRecord ok_call(const std::string& name, json args) {
  ToolOutcome o;
  o.content = json::array({{{"type", "text"}, {"text", "hello"}}});
  o.text = "hello";
  return {{name, std::move(args), "filesystem", ""}, o};
}

TEST(ToolbenchScorerTrial, SingleStepTasksScoreTheLastCallMultiStepTheSequence) {
  CallRecord look = ok_call("list_directory", {{"path", "."}});
  look.outcome.is_error = true;  // an exploratory call that failed does not count against a single-step task
  const CallRecord read = ok_call("read_text_file", {{"path", "./a.txt"}});
  TrialScore s = score_trial(one_label_task(), {look, read}, "");
  EXPECT_TRUE(s.pass) << s.reason;
  s = score_trial(one_label_task(), {read, look}, "");
  EXPECT_FALSE(s.tool_match);
  EXPECT_NE(s.reason.find("tool: expected 'read_text_file' got 'list_directory'"), std::string::npos) << s.reason;

  const CallRecord write = ok_call("write_file", {{"path", "b.txt"}});
  EXPECT_TRUE(score_trial(two_label_task(), {read, write}, "").pass);
  s = score_trial(two_label_task(), {look, read, write}, "");
  EXPECT_FALSE(s.tool_match);
  EXPECT_NE(s.reason.find("expected 2 call(s), got 3"), std::string::npos) << s.reason;
}

TEST(ToolbenchScorerTrial, PassNeedsAllThree) {
  const Task t = one_label_task();
  const TrialScore s = score_trial(t, {ok_call("read_text_file", {{"path", "a.txt"}})}, "");
  EXPECT_TRUE(s.tool_match && s.param_match && s.exec_pass && s.pass);
  EXPECT_EQ(s.reason, "");
}

TEST(ToolbenchScorerTrial, SimilarToolCountsAsToolMatch) {
  const TrialScore s = score_trial(one_label_task(), {ok_call("read_file", {{"path", "./a.txt"}})}, "");
  EXPECT_TRUE(s.tool_match);
  EXPECT_TRUE(s.pass);
}

TEST(ToolbenchScorerTrial, SimilarToolObjectsMatchByName) {
  // The shape of published MCPToolBench++ browser and search labels.
  const Task t = parse_task(json::parse(R"({"uuid": "b1", "category": "browser", "call_type": "single",
    "query": "open it", "tools": [{"name": "playwright_navigate", "input_schema": {"type": "object"}}],
    "mcp_tools_dict": {"playwright": ["playwright_navigate"]},
    "function_call_label": [{"name": "playwright_navigate", "step": "1", "mcp_server": "playwright",
      "similar_tools": [{"name": "puppeteer_navigate", "mcp_server": "puppeteer"}],
      "input": {"url": "https://example.com"}}]})"));
  const TrialScore s = score_trial(t, {ok_call("puppeteer_navigate", {{"url", "https://example.com"}})}, "");
  EXPECT_TRUE(s.tool_match) << s.reason;
  EXPECT_TRUE(s.pass) << s.reason;
  EXPECT_FALSE(score_trial(t, {ok_call("mcp_server", {{"url", "https://example.com"}})}, "").tool_match);
}

TEST(ToolbenchScorerTrial, WrongToolFailsToolAndParams) {
  const TrialScore s = score_trial(one_label_task(), {ok_call("write_file", {{"path", "./a.txt"}})}, "");
  EXPECT_FALSE(s.tool_match);
  EXPECT_FALSE(s.param_match);
  EXPECT_TRUE(s.exec_pass);
  EXPECT_NE(s.reason.find("tool: expected 'read_text_file' got 'write_file'"), std::string::npos) << s.reason;
}

TEST(ToolbenchScorerTrial, ExecutionErrorsFail) {
  CallRecord c = ok_call("read_text_file", {{"path", "./a.txt"}});
  c.outcome.is_error = true;
  c.outcome.text = "ENOENT: no such file or directory, open '/x/a.txt'";
  TrialScore s = score_trial(one_label_task(), {c}, "");
  EXPECT_TRUE(s.param_match);
  EXPECT_FALSE(s.exec_pass);
  EXPECT_FALSE(s.pass);
  EXPECT_NE(s.reason.find("execution failed: read_text_file: ENOENT"), std::string::npos) << s.reason;

  c = ok_call("read_text_file", {{"path", "./a.txt"}});
  c.outcome.content = json::array({{{"type", "text"}, {"text", ""}}});
  s = score_trial(one_label_task(), {c}, "");
  EXPECT_NE(s.reason.find("empty content"), std::string::npos) << s.reason;

  c.outcome = ToolOutcome{};
  c.outcome.error = "cannot start server 'filesystem': command 'nope' not found";
  s = score_trial(one_label_task(), {c}, "");
  EXPECT_NE(s.reason.find("command 'nope' not found"), std::string::npos) << s.reason;
}

TEST(ToolbenchScorerTrial, CallCountAndRunErrorsFail) {
  TrialScore s = score_trial(one_label_task(), {}, "");
  EXPECT_FALSE(s.tool_match || s.exec_pass || s.pass);
  EXPECT_NE(s.reason.find("no tool call made"), std::string::npos);
  const auto c = ok_call("read_text_file", {{"path", "./a.txt"}});
  s = score_trial(two_label_task(), {c}, "");
  EXPECT_FALSE(s.tool_match);
  EXPECT_NE(s.reason.find("expected 2 call(s), got 1"), std::string::npos) << s.reason;
  s = score_trial(one_label_task(), {c}, "step limit reached (1 tool calls)");
  EXPECT_FALSE(s.pass);
  EXPECT_NE(s.reason.find("step limit"), std::string::npos);
}

}  // namespace
}  // namespace mlsb::toolbench
