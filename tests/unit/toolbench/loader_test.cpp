#include <gtest/gtest.h>

#include <filesystem>
#include <initializer_list>

#include "support/test_support.hpp"
#include "util/json_file.hpp"
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

// Expects load_dataset(file) to throw a DatasetError whose message holds each of `parts`.
void expect_dataset_error(const std::filesystem::path& file, std::initializer_list<std::string> parts) {
  try {
    load_dataset(file);
    ADD_FAILURE() << "expected DatasetError for " << file;
  } catch (const DatasetError& e) {
    for (const auto& part : parts) EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

TEST(ToolbenchLoader, MissingFileAndNeitherArrayNorObjectAreErrors) {
  test::TempDir dir;
  expect_dataset_error(dir / "absent.json", {"absent.json", "does not exist"});
  test::write_file(dir / "num.json", "42");
  expect_dataset_error(dir / "num.json", {"num.json", "expected a JSON array of task records or one record"});
}

TEST(ToolbenchLoader, ASingleObjectIsAOneRecordFile) {
  test::TempDir dir;
  test::write_file(dir / "one.json", kGood);
  const Dataset one = load_dataset(dir / "one.json");
  ASSERT_EQ(one.tasks.size(), 1u);
  EXPECT_EQ(one.tasks[0].uuid, "u1");
  EXPECT_TRUE(one.errors.empty());
  test::write_file(dir / "empty.json", "{}");
  const Dataset bad = load_dataset(dir / "empty.json");
  EXPECT_TRUE(bad.tasks.empty());
  ASSERT_EQ(bad.errors.size(), 1u);
  EXPECT_EQ(bad.errors[0].problem, "record 0 (no uuid): missing field 'uuid'");
}

TEST(ToolbenchLoader, DeepNestingIsAnErrorNamingTheFile) {
  test::TempDir dir;
  const std::size_t depth = 100000;
  test::write_file(dir / "deep.json", std::string(depth, '[') + std::string(depth, ']'));
  expect_dataset_error(dir / "deep.json", {"task file", "deep.json", "JSON nesting deeper than 512 levels"});
  // The same inside an otherwise good record: the limit applies before any record is copied.
  const std::string deep_input = replace(kGood, "\"input\": {\"path\": \".\"}",
                                         "\"input\": {\"path\": " + std::string(depth, '[') + std::string(depth, ']') + "}");
  test::write_file(dir / "deep_record.json", "[" + deep_input + "]");
  expect_dataset_error(dir / "deep_record.json", {"deep_record.json", "JSON nesting deeper than 512 levels"});
}

TEST(ToolbenchLoader, OnlyRegularFilesAreRead) {
  test::TempDir dir;
  expect_dataset_error(dir.path(), {dir.path().string(), "is not a regular file (a folder)"});
  if (std::filesystem::exists("/dev/zero")) expect_dataset_error("/dev/zero", {"/dev/zero", "is not a regular file"});
}

TEST(ToolbenchLoader, TaskFilesAreCappedAt256MiB) {
  EXPECT_EQ(kMaxTaskFileBytes, 256u << 20);
  test::TempDir dir;
  test::write_file(dir / "big.json", "[]");
  std::filesystem::resize_file(dir / "big.json", kMaxTaskFileBytes + 1);  // sparse: no disk used
  expect_dataset_error(dir / "big.json", {"big.json", "larger than the limit of 256 MiB"});
}

TEST(ToolbenchLoader, ReadJsonFileRefusesFilesGrownPastTheLimit) {
  test::TempDir dir;
  test::write_file(dir / "a.json", "[1, 2, 3]");
  EXPECT_EQ(read_json_file(dir / "a.json", "x file", 9), nlohmann::json::parse("[1, 2, 3]"));
  try {
    read_json_file(dir / "a.json", "x file", 8);
    FAIL() << "expected JsonFileError";
  } catch (const JsonFileError& e) {
    EXPECT_NE(std::string(e.what()).find("x file " + (dir / "a.json").string() + ": larger than the limit of 8 bytes"),
              std::string::npos)
        << e.what();
  }
}

TEST(ToolbenchLoader, SimilarToolsAreNamesOrObjectsWithAName) {
  nlohmann::json r = nlohmann::json::parse(kGood);
  r["function_call_label"][0]["similar_tools"] =
      nlohmann::json::parse(R"([{"name": "puppeteer_navigate", "mcp_server": "puppeteer"}, "read_file"])");
  const Task t = parse_task(r);
  EXPECT_EQ(t.labels.at(0).similar_tools, (std::vector<std::string>{"puppeteer_navigate", "read_file"}));
  for (const char* bad : {R"([{"mcp_server": "puppeteer"}])", R"([{"name": 3}])", "[7]"}) {
    r["function_call_label"][0]["similar_tools"] = nlohmann::json::parse(bad);
    try {
      parse_task(r);
      ADD_FAILURE() << bad;
    } catch (const RecordProblem& p) {
      EXPECT_EQ(p.field.rfind("function_call_label[0].similar_tools[0]", 0), 0u) << bad << ": " << p.field;
    }
  }
}

// Every published MCPToolBench++ task file (data/<category>/*.json: the demos and the filesystem set)
// and sample (samples/*.json, one record each) under ../shared loads without a bad record, except the
// map demo, which is not valid JSON as published.
TEST(ToolbenchLoader, PublishedDemosAndSamplesLoadCleanly) {
  namespace fs = std::filesystem;
  const auto root = test::shared_dir() / "mcptoolbench";
  if (!fs::is_directory(root)) GTEST_SKIP() << "no " << root;
  std::vector<fs::path> dirs = {root / "samples"}, files;
  for (const auto& category : fs::directory_iterator(root / "data"))
    if (category.is_directory()) dirs.push_back(category.path());
  for (const auto& d : dirs)
    for (const auto& e : fs::directory_iterator(d))
      if (e.is_regular_file() && e.path().extension() == ".json") files.push_back(e.path());
  EXPECT_GE(files.size(), 12u);
  for (const auto& f : files) {
    if (f.filename() == "map_single_demo.json") {
      EXPECT_THROW(load_dataset(f), DatasetError);
      continue;
    }
    const Dataset ds = load_dataset(f);
    EXPECT_FALSE(ds.tasks.empty()) << f;
    for (const auto& e : ds.errors) ADD_FAILURE() << e.message;
  }
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
