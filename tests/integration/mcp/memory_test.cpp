// mcp-server-memory (npm) over stdio, its knowledge graph in a temp file.
#include <gtest/gtest.h>

#include "integration/mcp/mcp_test_helpers.hpp"
#include "mcp/client.hpp"
#include "support/test_support.hpp"

namespace mlsb::mcp::test {
namespace {

TEST(McpMemory, CreatesAndReadsBackEntities) {
  if (npm_server("mcp-server-memory").empty()) GTEST_SKIP() << "npm servers missing: run scripts/setup-deps";
  mlsb::test::TempDir tmp;
  const auto memory_file = tmp / "memory.jsonl";
  ServerSpec spec;
  spec.name = "memory";
  spec.command = {"mcp-server-memory"};
  spec.env = {{"MEMORY_FILE_PATH", memory_file.string()}};
  spec.stderr_log = (tmp / "memory.log").string();
  {
    auto client = Client::connect(spec);
    const auto tools = client->list_tools();
    EXPECT_GE(tools.size(), 9u);
    const auto created = client->call_tool(
        "create_entities",
        {{"entities", {{{"name", "H200"}, {"entityType", "gpu"}, {"observations", {"141 GB HBM3e"}}}}}});
    ASSERT_FALSE(created.is_error) << created.text();
    const auto found = client->call_tool("search_nodes", {{"query", "H200"}});
    ASSERT_FALSE(found.is_error) << found.text();
    EXPECT_NE(found.text().find("141 GB HBM3e"), std::string::npos) << found.text();
  }
  // A second server process reads the same file back.
  auto client = Client::connect(spec);
  const auto graph = client->call_tool("read_graph", nlohmann::json::object());
  EXPECT_NE(graph.text().find("H200"), std::string::npos) << graph.text();
  EXPECT_NE(mlsb::test::read_file(memory_file).find("H200"), std::string::npos);
}

}  // namespace
}  // namespace mlsb::mcp::test
