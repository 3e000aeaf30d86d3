#include "mcp/command_lookup.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>

#include "support/test_support.hpp"

namespace mlsb::mcp {
namespace {

void make_executable(const std::filesystem::path& p) {
  mlsb::test::write_file(p, "#!/bin/sh\n");
  ::chmod(p.c_str(), 0755);
}

TEST(McpCommandLookup, SearchesPathThenTheBundledBinDir) {
  mlsb::test::TempDir a, b, bundled;
  make_executable(b / "tool");
  make_executable(bundled / "tool");
  make_executable(bundled / "only-bundled");
  mlsb::test::write_file(a / "tool", "not executable");
  ::setenv("MLSB_MCP_SERVERS_BIN", bundled.path().c_str(), 1);
  const std::string path = a.path().string() + ":" + b.path().string();
  EXPECT_EQ(find_executable("tool", path, ""), b / "tool");
  EXPECT_EQ(find_executable("only-bundled", path, ""), bundled / "only-bundled");
  EXPECT_EQ(find_executable("missing-tool", path, ""), std::nullopt);
  EXPECT_EQ(bundled_bin_dir(), bundled.path());
  ::unsetenv("MLSB_MCP_SERVERS_BIN");
  EXPECT_EQ(bundled_bin_dir(), std::filesystem::path(MLSB_SOURCE_DIR) / "mcp/servers/node_modules/.bin");
}

TEST(McpCommandLookup, PathsWithASlashAreNotSearched) {
  mlsb::test::TempDir dir;
  make_executable(dir / "bin" / "srv");
  EXPECT_EQ(find_executable((dir / "bin" / "srv").string(), "", ""), dir / "bin" / "srv");
  EXPECT_EQ(find_executable("bin/srv", "", dir.path().string()), dir / "bin" / "srv");
  EXPECT_EQ(find_executable("./srv", dir.path().string(), ""), std::nullopt);
}

}  // namespace
}  // namespace mlsb::mcp
