#include <gtest/gtest.h>

#include "support/test_support.hpp"
#include "workloads/toolbench/task.hpp"

namespace mlsb::toolbench {
namespace {

const char* kGood = R"({"uuid": "u1", "category": "filesystem", "call_type": "single", "query": "list it",
  "tools": [{"name": "list_directory", "description": "d",
             "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}],
  "mcp_tools_dict": {"filesystem": ["list_directory"]},
  "function_call_label": [{"name": "list_directory", "step": "1", "mcp_server": "filesystem",
                           "similar_tools": [], "input": {"path": "."}, "output": {}}]})";

std::string replace(std::string s, const std::string& from, const std::string& to) {
  const auto pos = s.find(from);
  EXPECT_NE(pos, std::string::npos) << from;
  return s.replace(pos, from.size(), to);
}

TEST(ToolbenchLoader, LoadsAGoodRecord) {
  test::TempDir dir;
  test::write_file(dir / "t.json", std::string("[") + kGood + "]");
  const Dataset ds = load_dataset(dir / "t.json");
  ASSERT_EQ(ds.tasks.size(), 1u);
  EXPECT_TRUE(ds.errors.empty());
  const Task& t = ds.tasks[0];
  EXPECT_EQ(t.uuid, "u1");
  EXPECT_EQ(t.labels.at(0).server, "filesystem");
  EXPECT_EQ(t.labels.at(0).input["path"], ".");
  ASSERT_NE(t.find_tool("list_directory"), nullptr);
  EXPECT_EQ(t.server_tools.at("filesystem").at(0), "list_directory");
}

TEST(ToolbenchLoader, InvalidJsonNamesFileAndPosition) {
  test::TempDir dir;
  test::write_file(dir / "broken.json", "[{\"uuid\": 1}{\"uuid\": 2}]");
  try {
    load_dataset(dir / "broken.json");
    FAIL() << "expected DatasetError";
  } catch (const DatasetError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("broken.json"), std::string::npos) << msg;
    EXPECT_NE(msg.find("byte 13"), std::string::npos) << msg;
    EXPECT_NE(msg.find("line 1, column 13"), std::string::npos) << msg;
  }
}

TEST(ToolbenchLoader, MissingFileAndNonArrayAreErrors) {
  test::TempDir dir;
  EXPECT_THROW(load_dataset(dir / "absent.json"), DatasetError);
  test::write_file(dir / "obj.json", "{}");
  EXPECT_THROW(load_dataset(dir / "obj.json"), DatasetError);
}

TEST(ToolbenchLoader, PublishedMapDemoIsAClearError) {
  const auto file = test::shared_dir() / "mcptoolbench" / "data" / "map" / "map_single_demo.json";
  if (!std::filesystem::exists(file)) GTEST_SKIP() << "no " << file;
  try {
    load_dataset(file);
    FAIL() << "the map demo is not valid JSON";
  } catch (const DatasetError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("map_single_demo.json"), std::string::npos) << msg;
    EXPECT_NE(msg.find("not valid JSON"), std::string::npos) << msg;
    EXPECT_NE(msg.find("line 1, column"), std::string::npos) << msg;
  }
}

TEST(ToolbenchLoader, BadRecordsDoNotStopTheOthers) {
  test::TempDir dir;
  const std::string good2 = replace(kGood, "\"u1\"", "\"u2\"");
  const std::string no_query = replace(replace(kGood, "\"u1\"", "\"u3\""), "\"query\": \"list it\",", "");
  const std::string bad_input = replace(replace(kGood, "\"u1\"", "\"u4\""), "\"input\": {\"path\": \".\"}", "\"input\": \"x\"");
  const std::string bad_tool = replace(replace(kGood, "\"u1\"", "\"u5\""), "\"name\": \"list_directory\", \"description\"",
                                       "\"name\": 7, \"description\"");
  test::write_file(dir / "t.json", "[" + std::string(kGood) + "," + no_query + ",42," + bad_input + "," + good2 +
                                       "," + bad_tool + "," + kGood + "]");
  const Dataset ds = load_dataset(dir / "t.json");
  ASSERT_EQ(ds.tasks.size(), 2u);
  EXPECT_EQ(ds.tasks[0].uuid, "u1");
  EXPECT_EQ(ds.tasks[1].uuid, "u2");
  EXPECT_EQ(ds.tasks[1].index, 4u);
  ASSERT_EQ(ds.errors.size(), 5u);
  const auto& e0 = ds.errors[0];
  EXPECT_EQ(e0.index, 1u);
  EXPECT_EQ(e0.uuid, "u3");
  EXPECT_EQ(e0.field, "query");
  EXPECT_NE(e0.message.find("t.json"), std::string::npos) << e0.message;
  EXPECT_NE(e0.message.find("record 1 (uuid u3)"), std::string::npos) << e0.message;
  EXPECT_NE(e0.message.find("missing field 'query'"), std::string::npos) << e0.message;
  EXPECT_EQ(ds.errors[1].index, 2u);
  EXPECT_NE(ds.errors[1].message.find("(no uuid)"), std::string::npos) << ds.errors[1].message;
  EXPECT_EQ(ds.errors[2].field, "function_call_label[0].input");
  EXPECT_NE(ds.errors[2].message.find("must be an object, got string"), std::string::npos) << ds.errors[2].message;
  EXPECT_EQ(ds.errors[3].field, "tools[0].name");
  EXPECT_EQ(ds.errors[4].index, 6u);
  EXPECT_NE(ds.errors[4].message.find("duplicate uuid u1"), std::string::npos) << ds.errors[4].message;
}

TEST(ToolbenchLoader, LabelsRunInStepOrder) {
  nlohmann::json r = nlohmann::json::parse(kGood);
  auto second = r["function_call_label"][0];
  second["step"] = "2";
  second["name"] = "read_file";
  r["function_call_label"].insert(r["function_call_label"].begin(), second);
  const Task t = parse_task(r);
  ASSERT_EQ(t.labels.size(), 2u);
  EXPECT_EQ(t.labels[0].step, "1");
  EXPECT_EQ(t.labels[1].name, "read_file");
}

TEST(ToolbenchLoader, EmptyLabelsAreABadRecord) {
  nlohmann::json r = nlohmann::json::parse(kGood);
  r["function_call_label"] = nlohmann::json::array();
  try {
    parse_task(r);
    FAIL();
  } catch (const RecordProblem& p) {
    EXPECT_EQ(p.field, "function_call_label");
  }
}

TEST(ToolbenchLoader, ShippedDatasetLoadsCleanly) {
  const Dataset ds = load_dataset(test::source_dir() / "datasets" / "toolbench" / "tasks.json");
  EXPECT_GE(ds.tasks.size(), 30u);
  EXPECT_TRUE(ds.errors.empty());
}

}  // namespace
}  // namespace mlsb::toolbench
