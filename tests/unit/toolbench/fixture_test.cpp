#include <gtest/gtest.h>

#include <algorithm>

#include "support/test_support.hpp"
#include "workloads/toolbench/fixture.hpp"

namespace mlsb::toolbench {
namespace {

namespace fs = std::filesystem;

TEST(ToolbenchFixture, CopyIsFreshAndWritable) {
  test::TempDir dir;
  test::write_file(dir / "src" / "proj" / "a.txt", "A");
  fs::permissions(dir / "src" / "proj" / "a.txt", fs::perms::owner_read);  // read-only source
  const std::vector<fs::path> created = make_trial_copy({dir / "src", false}, dir / "copy", {});
  EXPECT_TRUE(created.empty());
  EXPECT_EQ(test::read_file(dir / "copy" / "proj" / "a.txt"), "A");
  test::write_file(dir / "copy" / "proj" / "a.txt", "changed");  // writable
  EXPECT_EQ(test::read_file(dir / "src" / "proj" / "a.txt"), "A");
  EXPECT_THROW(make_trial_copy({dir / "src", false}, dir / "copy", {}), FixtureError);  // must be fresh
  EXPECT_THROW(make_trial_copy({dir / "absent", false}, dir / "copy2", {}), FixtureError);
}

TEST(ToolbenchFixture, SubdirsOnlyLeavesTaskFilesOut) {
  test::TempDir dir;
  test::write_file(dir / "ds" / "tasks.json", "[]");
  test::write_file(dir / "ds" / "proj" / "a.txt", "A");
  make_trial_copy({dir / "ds", true}, dir / "copy", {});
  EXPECT_TRUE(fs::exists(dir / "copy" / "proj" / "a.txt"));
  EXPECT_FALSE(fs::exists(dir / "copy" / "tasks.json"));
}

TEST(ToolbenchFixture, PlaceholdersFillOnlyMissingFilesOfPresentTrees) {
  test::TempDir dir;
  test::write_file(dir / "src" / "proj" / "keep.py", "original");
  const std::vector<Placeholder> ph = {{"proj/keep.py", "placeholder"},
                                       {"proj/sub/new.py", "def f():\n    pass\n"},
                                       {"other/x.py", "x"},
                                       {"TOP.md", "top"}};
  const auto created = make_trial_copy({dir / "src", false}, dir / "copy", ph);
  EXPECT_EQ(created, (std::vector<fs::path>{"proj/sub/new.py", "TOP.md"}));
  EXPECT_EQ(test::read_file(dir / "copy" / "proj" / "keep.py"), "original");
  EXPECT_EQ(test::read_file(dir / "copy" / "proj" / "sub" / "new.py"), "def f():\n    pass\n");
  EXPECT_FALSE(fs::exists(dir / "copy" / "other"));
  EXPECT_FALSE(fs::exists(dir / "src" / "proj" / "sub"));  // the source is untouched
}

TEST(ToolbenchFixture, LoadsAndValidatesPlaceholderFiles) {
  test::TempDir dir;
  test::write_file(dir / "p.json", R"({"placeholders": [{"path": "a/b.py", "content": "x"}]})");
  const auto ph = load_placeholders(dir / "p.json");
  ASSERT_EQ(ph.size(), 1u);
  EXPECT_EQ(ph[0].path, fs::path("a/b.py"));
  for (const char* bad : {R"({"placeholders": [{"path": "../x", "content": ""}]})",
                          R"({"placeholders": [{"path": "/abs", "content": ""}]})",
                          R"({"placeholders": [{"path": "a"}]})", R"([])", "nope"}) {
    test::write_file(dir / "bad.json", bad);
    EXPECT_THROW(load_placeholders(dir / "bad.json"), FixtureError) << bad;
  }
}

TEST(ToolbenchFixture, BundledPlaceholdersCoverTheMissingFiles) {
  const auto ph = load_placeholders(test::source_dir() / "workloads" / "toolbench" / "placeholders.json");
  std::vector<fs::path> paths;
  for (const auto& p : ph) paths.push_back(p.path);
  for (const char* f : {"test_project_root/src/main.py", "test_project_root/src/utils/file_utils.py",
                        "test_project_root/tests/unit/test_calculations.py"})
    EXPECT_NE(std::find(paths.begin(), paths.end(), fs::path(f)), paths.end()) << f;
}

// The published fixture now ships the files the placeholders stood in for: its own files are copied as
// published and no placeholder of ours is written over them or beside them.
TEST(ToolbenchFixture, ThePublishedFixtureGetsNoPlaceholders) {
  const fs::path published = test::shared_dir() / "mcptoolbench" / "data" / "file_system";
  if (!fs::exists(published / "test_project_root" / "src" / "main.py")) GTEST_SKIP() << "no " << published;
  test::TempDir dir;
  const auto ph = load_placeholders(test::source_dir() / "workloads" / "toolbench" / "placeholders.json");
  const auto created = make_trial_copy(resolve_fixture("auto", published / "filesystem_0723_single.json"),
                                       dir / "copy", ph);
  EXPECT_TRUE(created.empty());
  for (const auto& p : ph)
    EXPECT_EQ(test::read_file(dir / "copy" / p.path), test::read_file(published / p.path)) << p.path;
}

TEST(ToolbenchFixture, AutoResolvesBesideTheDataset) {
  test::TempDir dir;
  test::write_file(dir / "a" / "tasks.json", "[]");
  test::write_file(dir / "a" / "fixture" / "x.txt", "x");
  FixtureSource s = resolve_fixture("auto", dir / "a" / "tasks.json");
  EXPECT_EQ(s.dir, dir / "a" / "fixture");
  EXPECT_FALSE(s.subdirs_only);
  test::write_file(dir / "b" / "tasks.json", "[]");
  s = resolve_fixture("auto", dir / "b" / "tasks.json");
  EXPECT_EQ(s.dir, dir / "b");
  EXPECT_TRUE(s.subdirs_only);
  EXPECT_THROW(resolve_fixture((dir / "none").string(), dir / "b" / "tasks.json"), FixtureError);
  try {
    resolve_fixture((dir / "b" / "tasks.json").string(), dir / "b" / "tasks.json");
    ADD_FAILURE() << "a file is not a fixture folder";
  } catch (const FixtureError& e) {
    EXPECT_NE(std::string(e.what()).find("tasks.json is not a folder"), std::string::npos) << e.what();
  }
}

TEST(ToolbenchFixture, PlaceholderFilesMustBeRegularAndShallow) {
  test::TempDir dir;
  test::write_file(dir / "deep.json", R"({"placeholders": )" + std::string(100000, '[') + std::string(100000, ']') + "}");
  const auto fails_with = [](const fs::path& file, const std::string& needle) {
    try {
      load_placeholders(file);
      ADD_FAILURE() << "accepted " << file;
    } catch (const FixtureError& e) {
      EXPECT_NE(std::string(e.what()).find("placeholders file " + file.string() + ": " + needle), std::string::npos)
          << e.what();
    }
  };
  fails_with(dir / "deep.json", "JSON nesting deeper than 512 levels");
  fails_with(dir.path(), "is not a regular file (a folder)");
}

}  // namespace
}  // namespace mlsb::toolbench
