// The folders' layering, read off the real source tree: every `#include "..."` of ours must be one its
// folder may include (util includes nothing of ours; reports reads only the metric and value headers of
// the harness, never the runner or a workload; a workload never includes another workload). A rule
// broken by a new include fails here naming the file, the line and the rule.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

namespace mlsb {
namespace {

namespace fs = std::filesystem;

// The folder a path belongs to for layering: "workloads/<name>" for a workload, else its top folder.
std::string layer_of(const std::string& path) {
  const size_t slash = path.find('/');
  if (slash == std::string::npos) return path;
  const std::string top = path.substr(0, slash);
  if (top != "workloads") return top;
  const size_t next = path.find('/', slash + 1);
  return next == std::string::npos ? top : path.substr(0, next);
}

// Whether a file in folder `from` may include `header` (a path from the project root); "" when it may,
// else the rule it breaks.
std::string rule_broken(const std::string& from, const std::string& header) {
  const std::string to = layer_of(header);
  if (to == from) return "";
  if (from == "util") return "util includes nothing of ours";
  if (to == "app") return "only the application includes app/";
  if (to == "util") return "";
  if (from == "reports") {
    if (header == "harness/metric.hpp" || header == "harness/value.hpp") return "";
    return "reports includes only harness/metric.hpp and harness/value.hpp of the harness (never the runner, a "
           "workload, a backend or mcp)";
  }
  if (from == "backends" || from == "mcp") return from + " includes only util/ and itself";
  if (from.rfind("workloads/", 0) == 0) {
    if (to == "workloads/common" || to == "backends" || (to == "mcp" && from == "workloads/toolbench")) return "";
    if (to.rfind("workloads", 0) == 0) return "a workload never includes another workload (" + to + ")";
    static const std::vector<std::string> api = {"harness/workload.hpp", "harness/axes.hpp", "harness/registry.hpp",
                                                 "harness/alias.hpp",    "harness/value.hpp", "harness/metric.hpp",
                                                 "harness/suite.hpp"};
    if (std::find(api.begin(), api.end(), header) != api.end()) return "";
    return "a workload includes the workload API of the harness (workload, axes, registry, alias, value, metric, "
           "suite), backends, util and workloads/common only";
  }
  if (from == "workloads/common") return "workloads/common includes util/, backends/ and the harness API only";
  if (from == "harness") return to == "backends" || to == "reports" ? "" : "harness includes util, backends, reports";
  return "";  // app and tests may include anything
}

struct Violation {
  std::string file;
  int line;
  std::string header, rule;
};

std::vector<Violation> scan(const fs::path& root) {
  static const std::regex include(R"re(^\s*#\s*include\s+"([a-z_0-9]+/[^"]+)")re");
  std::vector<Violation> out;
  for (const char* top : {"util", "harness", "backends", "reports", "mcp", "workloads", "app"}) {
    for (const auto& entry : fs::recursive_directory_iterator(root / top)) {
      const auto ext = entry.path().extension();
      if (!entry.is_regular_file() || (ext != ".cpp" && ext != ".hpp" && ext != ".cu" && ext != ".cuh")) continue;
      const std::string rel = fs::relative(entry.path(), root).generic_string();
      if (rel.find("/node_modules/") != std::string::npos) continue;
      std::ifstream in(entry.path());
      std::string text;
      int n = 0;
      while (std::getline(in, text)) {
        ++n;
        std::smatch m;
        if (!std::regex_search(text, m, include)) continue;
        const std::string header = m[1];
        if (!fs::exists(root / header)) continue;  // a system header spelled with quotes
        std::string from = layer_of(rel);
        if (rel.find("/bench/") != std::string::npos) from = "app";  // benchmark binaries are applications
        if (const std::string rule = rule_broken(from, header); !rule.empty()) out.push_back({rel, n, header, rule});
      }
    }
  }
  return out;
}

TEST(Layering, TheRulesCatchWhatTheyForbid) {
  EXPECT_EQ(rule_broken("workloads/moe_offload", "workloads/moe_train/config.hpp").rfind("a workload never", 0), 0u);
  EXPECT_NE(rule_broken("reports", "harness/workload.hpp"), "");
  EXPECT_NE(rule_broken("reports", "harness/runner.hpp"), "");
  EXPECT_NE(rule_broken("util", "harness/workload.hpp"), "");
  EXPECT_NE(rule_broken("workloads/compress", "harness/runner.hpp"), "");
  EXPECT_NE(rule_broken("harness", "app/catalog.hpp"), "");
  EXPECT_NE(rule_broken("mcp", "reports/store.hpp"), "");
  EXPECT_EQ(rule_broken("reports", "harness/metric.hpp"), "");
  EXPECT_EQ(rule_broken("workloads/compress", "workloads/common/model_presets.hpp"), "");
  EXPECT_EQ(rule_broken("workloads/toolbench", "mcp/client.hpp"), "");
  EXPECT_EQ(rule_broken("app", "workloads/compress/codec.hpp"), "");
}

TEST(Layering, NoFolderIncludesOneItMayNot) {
  const auto found = scan(MLSB_SOURCE_DIR);
  for (const auto& v : found) ADD_FAILURE() << v.file << ":" << v.line << ": includes " << v.header << ": " << v.rule;
  EXPECT_TRUE(found.empty());
}

}  // namespace
}  // namespace mlsb
