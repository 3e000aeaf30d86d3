// scripts/nightly end to end: the real script driving the real binary (--binary, no build) into a temp store
// and output folder; its exit codes for a fit CPU machine, a missing GPU, a busy GPU, an output folder it
// cannot write and a failed build.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "support/test_support.hpp"

namespace mlsb {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

using test::shell_quote;

// A suite of a few of the smoke suite's fastest cases (a codec on 1M elements, one expert-cache policy): two
// nightly runs of it with 3 repetitions take a few seconds. A whole suite, not smoke with --filter: a run
// made with --filter is partial and never a later night's baseline.
constexpr const char* kFastSuite = R"({"name": "fast", "description": "two of smoke's fastest cases", "cases": [
  {"workload": "compress.codec", "params": {"codec": "int8-block", "elements": 1048576}},
  {"workload": "moe_offload", "params": {"layers": 4, "experts": 8, "seq_len": 32, "policy": "lru"}}]})";

// The script's command line; under GitHub Actions it would add its summaries to the job's, so not here.
std::string script(const std::string& args) {
  return "env -u GITHUB_STEP_SUMMARY " + shell_quote(test::source_dir() / "scripts" / "nightly") + " " + args;
}
std::string nightly(const std::string& args) { return script("--binary " + shell_quote(test::binary()) + " " + args); }

bool real_gpu_driver() { return test::run_shell("nvidia-smi -L").exit_code == 0; }

// A stand-in nvidia-smi on PATH: one GPU, and the compute processes in $FAKE_GPU_PROCS.
fs::path fake_nvidia_smi(const test::TempDir& dir) {
  const fs::path bin = dir / "fakebin";
  test::write_file(bin / "nvidia-smi", R"sh(#!/bin/sh
case "$*" in
  -L) echo "GPU 0: NVIDIA H200 (UUID: GPU-00000000-0000-0000-0000-000000000000)" ;;
  *query-compute-apps*) [ -n "$FAKE_GPU_PROCS" ] && printf '%s\n' "$FAKE_GPU_PROCS"; true ;;
  *persistence_mode*) echo "Disabled" ;;
  *compute_cap*) echo "9.0" ;;
  *query-gpu*) echo "0, NVIDIA H200, 1980 MHz, 1980 MHz, 3201 MHz, 3201 MHz" ;;
  *) echo "fake nvidia-smi $*" ;;
esac
)sh");
  fs::permissions(bin / "nvidia-smi", fs::perms::owner_all);
  return bin;
}

// Night 1's JSON report re-imported as a run of an older commit whose every metric was `factor` times
// better: the baseline `compare --baseline auto` finds for night 2. The factors are far from 1 (50 and 1/50)
// because the tests time real work on a machine that ctest and others load unevenly (night 1 has been seen
// four times slower than night 2 under load, which cancelled a factor of 4); whether an A/A pair
// raises no alarm is a property of compare's statistics, tested with synthetic samples in the unit tests.
void import_as_older_commit(const fs::path& db, const fs::path& report, double factor) {
  auto j = nlohmann::json::parse(test::read_file(report));
  j["run"]["uuid"] = "00000000-0000-4000-8000-000000000001";
  j["run"]["git"]["sha"] = std::string(40, 'a');
  for (auto& c : j["cases"])
    for (auto& [metric, values] : c["samples"].items()) {
      const bool lower = c["summaries"][metric]["better"] == "lower";
      for (auto& v : values)
        if (v.is_number()) v = v.get<double>() * (lower ? 1 / factor : factor);
    }
  const fs::path file = db.parent_path() / "older.json";
  test::write_file(file, j.dump());
  const auto r = test::run_cli(db, "import json " + shell_quote(file));
  ASSERT_EQ(r.exit_code, 0) << r.err;
}

// The nightly's options for the fast suite (written beside the output folder) into `db` and `out`.
std::string fast_args(const fs::path& db, const fs::path& out) {
  const fs::path suite = out.parent_path() / "fast.json";
  test::write_file(suite, kFastSuite);
  return "--backend cpu --suite " + shell_quote(suite) + " --repetitions 3 --history 5 --branch nightly-test --db " +
         shell_quote(db) + " --out " + shell_quote(out);
}

void expect_artifacts(const fs::path& out, const std::vector<std::string>& files, const std::string& err) {
  for (const auto& f : files) EXPECT_TRUE(fs::exists(out / f)) << f << " missing\n" << err;
}

TEST(Nightly, TwoNightsPassAndLeaveReportsComparisonHistoryAndSummary) {
  test::TempDir dir;
  const fs::path db = dir / "store" / "nightly.db", out = dir / "out";
  const auto first = test::run_shell(nightly(fast_args(db, out)));
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_THAT(first.err, HasSubstr("no baseline yet"));
  EXPECT_THAT(test::read_file(out / "summary.md"), AllOf(HasSubstr("PASS (exit 0)"), HasSubstr("no baseline yet")));
  expect_artifacts(out,
                   {"report-fast.html", "report-fast.json", "report-fast.md", "env.json", "index.html", "summary.md",
                    "store.db", "logs/nightly.log", "logs/run-fast.log"},
                   first.err);
  const auto report = nlohmann::json::parse(test::read_file(out / "report-fast.json"));
  EXPECT_EQ(report["run"]["suite"], "fast");
  EXPECT_EQ(report["run"]["branch"], "nightly-test");
  EXPECT_THAT(report["run"]["tags"].dump(), HasSubstr("\"nightly\""));
  ASSERT_EQ(report["cases"].size(), 2u);
  for (const auto& c : report["cases"]) {
    EXPECT_EQ(c["status"], "ok") << c.dump();
    EXPECT_EQ(c["summaries"][c["primary_metric"].get<std::string>()]["n"], 3) << c.dump();
  }
  const auto env = nlohmann::json::parse(test::read_file(out / "env.json"));
  EXPECT_EQ(env.value("machine_key", ""), report["run"]["machine_key"]);

  // An older commit 50 times slower: night 2 is compared with it, and passes.
  import_as_older_commit(db, out / "report-fast.json", 1.0 / 50);
  const auto second = test::run_shell(nightly(fast_args(db, out)));
  ASSERT_EQ(second.exit_code, 0) << second.err;
  expect_artifacts(
      out,
      {"report-fast.html", "report-fast.json", "report-fast.md", "compare-fast.json", "compare-fast.md",
       "compare-fast.html", "history-fast.html", "history-fast.json", "env.json", "index.html", "summary.md", "store.db"},
      second.err);
  const auto cmp = nlohmann::json::parse(test::read_file(out / "compare-fast.json"));
  EXPECT_EQ(cmp["regression"], false) << cmp.dump();
  EXPECT_TRUE(cmp["worse_cases"].empty()) << cmp.dump();
  EXPECT_THAT(test::read_file(out / "summary.md"),
              AllOf(HasSubstr("PASS (exit 0)"), HasSubstr("no regression against run")));
  EXPECT_THAT(test::read_file(out / "history-fast.html"), HasSubstr("<svg"));
  // index.html opens with the verdict and links the night's pages.
  EXPECT_THAT(test::read_file(out / "index.html"),
              AllOf(HasSubstr("<p class=\"banner pass\">PASS · exit 0</p>"), HasSubstr("<a href=\"compare-fast.html\">"),
                    HasSubstr("<a href=\"history-fast.html\">"), HasSubstr("Worst changes of primary metrics")));
  // Both nights are in the persistent store (and in the artifact's copy of it), the newest first.
  for (const fs::path& store : {db, out / "store.db"}) {
    const auto newest = test::run_cli(store, "report nightly --format json");
    const auto older = test::run_cli(store, "report nightly~2 --format json");
    ASSERT_EQ(newest.exit_code, 0) << newest.err;
    ASSERT_EQ(older.exit_code, 0) << older.err;
    EXPECT_GT(nlohmann::json::parse(newest.out)["run"]["id"], nlohmann::json::parse(older.out)["run"]["id"]);
  }
}

TEST(Nightly, ARegressionConfirmedByTheReRunExits1) {
  test::TempDir dir;
  const fs::path db = dir / "nightly.db", out = dir / "out";
  const auto first = test::run_shell(nightly(fast_args(db, out)));
  ASSERT_EQ(first.exit_code, 0) << first.err;
  import_as_older_commit(db, out / "report-fast.json", 50);  // the older commit was 50 times as fast
  const auto second = test::run_shell(nightly(fast_args(db, out)));
  EXPECT_EQ(second.exit_code, 1) << second.err;
  const auto cmp = nlohmann::json::parse(test::read_file(out / "compare-fast.json"));
  EXPECT_EQ(cmp["worse_cases"].size(), 2u) << cmp.dump();
  expect_artifacts(
      out, {"confirm-fast.html", "confirm-fast.json", "compare-confirm-fast.json", "compare-confirm-fast.html"},
      second.err);
  const auto confirm = nlohmann::json::parse(test::read_file(out / "confirm-fast.json"));
  EXPECT_THAT(confirm["run"]["tags"].dump(), HasSubstr("nightly-confirm"));
  EXPECT_EQ(confirm["cases"].size(), 2u);
  EXPECT_THAT(test::read_file(out / "summary.md"),
              AllOf(HasSubstr("REGRESSION (confirmed) (exit 1)"), HasSubstr("2 confirmed: compress.codec/"),
                    HasSubstr("| compress.codec/codec=int8-block,elements=1048576 |")));
  // The confirming run is in the persistent store as a partial run linked to the night: never a baseline.
  const auto confirm_in_store = test::run_cli(db, "report nightly-confirm --format json");
  ASSERT_EQ(confirm_in_store.exit_code, 0) << confirm_in_store.err;
  const auto stored = nlohmann::json::parse(confirm_in_store.out)["run"];
  EXPECT_EQ(stored["partial"], true);
  EXPECT_EQ(stored["confirms"], nlohmann::json::parse(test::read_file(out / "report-fast.json"))["run"]["uuid"]);
  EXPECT_THAT(test::run_cli(db, "db ls").out, HasSubstr("ok/partial"));
}

TEST(Nightly, CudaWithoutAGpuIsAnUnfitEnvironment) {
  if (real_gpu_driver()) GTEST_SKIP() << "a GPU driver answers here: the cuda suites would run";
  test::TempDir dir;
  const auto r = test::run_shell(
      nightly("--backend cuda --suite compress-gpu --db " + shell_quote(dir / "n.db") + " --out " + shell_quote(dir / "out")));
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_THAT(r.err, HasSubstr("needs an NVIDIA GPU"));
  EXPECT_THAT(test::read_file(dir / "out" / "summary.md"), AllOf(HasSubstr("stopped before the night ran (exit 3)"), HasSubstr("needs an NVIDIA GPU")));
}

TEST(Nightly, AGpuBusyWithAnotherProcessIsAnUnfitEnvironment) {
  if (real_gpu_driver()) GTEST_SKIP() << "a real GPU driver answers here";
  test::TempDir dir;
  const fs::path bin = fake_nvidia_smi(dir);
  const auto r = test::run_shell(
      "PATH=" + shell_quote(bin) + ":\"$PATH\" FAKE_GPU_PROCS='4242, python3, 1024 MiB' " +
      nightly("--backend cuda --suite compress-gpu --db " + shell_quote(dir / "n.db") + " --out " + shell_quote(dir / "out")));
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_THAT(r.err, HasSubstr("4242, python3, 1024 MiB"));
  EXPECT_THAT(r.err, HasSubstr("the GPU is busy"));
  EXPECT_THAT(test::read_file(dir / "out" / "gpu.txt"), HasSubstr("NVIDIA H200"));
}

TEST(Nightly, ACudaSuiteWhoseEveryCaseIsSkippedIsAnUnfitEnvironment) {
  // nvidia-smi answers (a stand-in) but the CUDA runtime finds no device: every case is skipped.
  if (real_gpu_driver()) GTEST_SKIP() << "a real GPU driver answers here";
  test::TempDir dir;
  const fs::path bin = fake_nvidia_smi(dir);
  const auto r =
      test::run_shell("PATH=" + shell_quote(bin) + ":\"$PATH\" " +
                      nightly("--backend cuda --suite compress-gpu --repetitions 1 --filter codec=fp8-e4m3 --db " +
                              shell_quote(dir / "n.db") + " --out " + shell_quote(dir / "out")));
  EXPECT_EQ(r.exit_code, 3) << r.err;
  const auto summary = test::read_file(dir / "out" / "summary.md");
  EXPECT_THAT(summary, HasSubstr("every case was skipped"));
  EXPECT_THAT(summary, HasSubstr("persistence mode is off"));
  EXPECT_TRUE(fs::exists(dir / "out" / "report-compress-gpu.html"));
}

TEST(Nightly, AnOutputFolderItCannotWriteIsAUsageError) {
  test::TempDir dir;
  test::write_file(dir / "a-file", "");  // a folder below a regular file cannot be made, even by root
  const auto r = test::run_shell(
      nightly("--backend cpu --suite smoke --db " + shell_quote(dir / "n.db") + " --out " + shell_quote(dir / "a-file" / "out")));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("is not writable"));
  EXPECT_FALSE(fs::exists(dir / "n.db"));
}

TEST(Nightly, UsageErrorsExit2) {
  for (const char* args :
       {"--backend tpu", "--repetitions 0", "--suite", "--no-such-option", "--backend cpu --suite no-such-suite",
        "--backend cpu --suite smoke --filter '(['", "--backend cpu --suite smoke --filter no-such-case",
        "--backend cpu --suite smoke --suite smoke"}) {
    test::TempDir dir;
    const auto r =
        test::run_shell(nightly(std::string(args) + " --db " + shell_quote(dir / "n.db") + " --out " + shell_quote(dir / "out")));
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.err;
  }
}

TEST(Nightly, SigtermStopsTheNightWhichExits130WithItsSummary) {
  test::TempDir dir;
  const fs::path db = dir / "n.db", out = dir / "out";
  // Many repetitions: the run is still sampling when the script is told to stop.
  const std::string night = nightly(fast_args(db, out) + " --repetitions 100000");
  const auto r = test::run_shell("(" + night + " & p=$!; sleep 3; kill -TERM $p; wait $p; echo \"rc=$?\")");
  EXPECT_THAT(r.out, HasSubstr("rc=130")) << r.err;
  EXPECT_THAT(test::read_file(out / "summary.md"), HasSubstr("INTERRUPTED (exit 130)"));
  EXPECT_THAT(test::run_cli(db, "db ls").out, HasSubstr("interrupted"));
  // Nothing of the night is left running (the listing's own shell names grep, and is left out).
  EXPECT_EQ(test::run_shell("ps -eo args | grep -F " + shell_quote(db.string()) + " | grep -v grep").out, "");
}

TEST(Nightly, ABuildFailureExits4) {
  // Without --binary the script builds; a cmake that fails stands in for a broken build.
  test::TempDir dir;
  const fs::path bin = dir / "fakebin";
  test::write_file(bin / "cmake", "#!/bin/sh\necho 'CMake Error: this build is broken' >&2\nexit 1\n");
  fs::permissions(bin / "cmake", fs::perms::owner_all);
  const auto r = test::run_shell(
      "PATH=" + shell_quote(bin) + ":\"$PATH\" " +
      script("--backend cpu --suite smoke --db " + shell_quote(dir / "n.db") + " --out " + shell_quote(dir / "out")));
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_THAT(r.err, HasSubstr("the build failed"));
  EXPECT_THAT(test::read_file(dir / "out" / "logs" / "build.log"), HasSubstr("this build is broken"));
}

}  // namespace
}  // namespace mlsb
