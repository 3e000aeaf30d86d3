// `mlsysbench list`: the text of the catalog of the project's workloads and its suites (workloads/suites)
// against a golden file. Everything `list` prints is declared (axis defaults, units, help, examples), so the
// golden file holds no placeholder.
#include "app/catalog.hpp"

#include <gtest/gtest.h>

#include "support/golden.hpp"
#include "support/test_support.hpp"

namespace mlsb {
namespace {

TEST(HarnessCatalog, ListTextMatchesGoldenFile) {
  nlohmann::json catalog = catalog_json({mlsb::test::source_dir() / "workloads" / "suites"});
  // This binary also registers test_* workloads to exercise the runner; `list` in mlsysbench has none.
  auto& workloads = catalog["workloads"];
  for (auto it = workloads.begin(); it != workloads.end();)
    it = it->at("name").get<std::string>().starts_with("test_") ? workloads.erase(it) : it + 1;
  ASSERT_FALSE(workloads.empty());
  mlsb::test::expect_golden(mlsb::test::golden_file("harness", "list.txt"), catalog_text(catalog));
}

}  // namespace
}  // namespace mlsb
