// API keys never leave the process except in the request header: a key planted in the environment is
// sent to the (fake) API, which echoes it in a 401 body, and then searched for in everything the CLI
// wrote: the store (database, WAL), every report format, `db show`, stdout and stderr.
#include <gtest/gtest.h>

#include <filesystem>

#include "integration/toolbench/fake_llm.hpp"
#include "support/test_support.hpp"
#include "workloads/toolbench/task.hpp"

namespace mlsb {
namespace {

namespace fs = std::filesystem;

TEST(ToolbenchLlmSecrets, APlantedKeyReachesNoOutput) {
  const std::string key = "sk-mlsb-planted-7d1f0c9e5b3a";
  test::FakeLlm llm(toolbench::load_dataset(test::source_dir() / "datasets/toolbench/tasks.json").tasks);
  test::TempDir dir;
  const fs::path db = dir / "runs.db";
  // One case whose calls succeed and one whose API rejects the key, quoting it; twice, for compare.
  const auto run = [&] {
    return test::run_shell("MLSB_PLANTED_KEY=" + key + " " + test::shell_quote(test::binary()) + " --db " +
                           test::shell_quote(db) +
                           " run toolbench -p agent=openai -p model=fake-model -p limit=2 -p retry_base_ms=1"
                           " -p api_key_env=MLSB_PLANTED_KEY -p base_url=" + llm.base_url("openai") + "," +
                           llm.base_url("openai", "/deny"));
  };
  const test::CommandResult first = run(), real = run();
  EXPECT_EQ(real.exit_code, 1) << real.out << real.err;  // the rejected case fails: every trial an agent error

  std::size_t sent = 0, denied = 0;
  for (const auto& q : llm.requests()) {
    EXPECT_EQ(q.authorization, "Bearer " + key) << q.path;
    sent += 1;
    denied += q.path.starts_with("/deny");
  }
  EXPECT_GE(sent, 10u);  // per run: 2 tasks x (a call + the answer) + the rejected one
  EXPECT_EQ(denied, 2u);

  std::vector<std::pair<std::string, std::string>> outputs = {
      {"run stdout", first.out + real.out}, {"run stderr", first.err + real.err}};
  for (const char* format : {"json", "html", "md", "gbench"}) {
    const test::CommandResult r = test::run_cli(db, std::string("report latest --format ") + format);
    ASSERT_EQ(r.exit_code, 0) << format << ": " << r.err;
    outputs.push_back({std::string("report ") + format, r.out + r.err});
  }
  const test::CommandResult show = test::run_cli(db, "db show latest");
  outputs.push_back({"db show", show.out + show.err});
  const test::CommandResult cmp = test::run_cli(db, "compare latest~1 latest");
  outputs.push_back({"compare", cmp.out + cmp.err});
  for (const auto& entry : fs::directory_iterator(dir.path()))
    outputs.push_back({entry.path().filename().string(), test::read_file(entry.path())});
  for (const auto& [what, text] : outputs) EXPECT_EQ(text.find(key), std::string::npos) << what << " holds the key";
  // The rejection itself is kept, redacted.
  const std::string& json_report = outputs[2].second;
  EXPECT_NE(json_report.find("Incorrect API key provided: [redacted]"), std::string::npos);
}

}  // namespace
}  // namespace mlsb
