// The mlsysbench CLI end to end: a real binary, real SQLite files, real MCP servers.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <thread>

#include <nlohmann/json.hpp>

#include "reports/store.hpp"
#include "backends/cuda/device.hpp"
#include "support/test_support.hpp"

namespace mlsb {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;
namespace fs = std::filesystem;

using test::shell_quote;

fs::path authored_dataset() { return test::source_dir() / "datasets" / "toolbench" / "tasks.json"; }

void skip_without_servers() {
  if (!fs::exists(test::npm_bin_dir() / "mcp-server-filesystem"))
    GTEST_SKIP() << "npm MCP servers not installed (run scripts/setup-deps)";
}

TEST(CliList, ShowsWorkloadsAxesMetricsAndSuites) {
  const auto r = test::run_cli("list");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, AllOf(HasSubstr("toolbench"), HasSubstr("dataset"), HasSubstr("pass_at_1"),
                           HasSubstr("higher is better"), HasSubstr("smoke"), HasSubstr("toolbench-fs")));
  const auto j = test::run_cli("list --json");
  ASSERT_EQ(j.exit_code, 0) << j.err;
  const auto catalog = nlohmann::json::parse(j.out);
  bool found = false;
  for (const auto& w : catalog["workloads"])
    if (w["name"] == "toolbench") {
      found = true;
      EXPECT_EQ(w["primary_metric"], "pass_at_1");
      EXPECT_FALSE(w["axes"].empty());
      for (const auto& m : w["metrics"]) EXPECT_FALSE(m["unit"].get<std::string>().empty()) << m.dump();
      for (const auto& a : w["axes"]) {
        if (a["name"] == "dataset") {
          EXPECT_TRUE(a["data"].get<bool>() && a["path"].get<bool>()) << a.dump();
        }
        if (a["name"] == "agent") {
          EXPECT_FALSE(a["data"].get<bool>()) << a.dump();
        }
        if (a["name"] == "placeholders") {  // keywords beside a path, not the only choices
          EXPECT_EQ(a["keywords"], nlohmann::json({"auto", "none"})) << a.dump();
          EXPECT_FALSE(a.contains("choices")) << a.dump();
        }
      }
    }
  EXPECT_TRUE(found);
  EXPECT_THAT(r.out, HasSubstr("[a path, or auto|none]"));
  for (const auto& s : catalog["suites"]) EXPECT_FALSE(s.contains("error")) << s.dump();
}

TEST(CliRun, BadInputsGiveClearErrorsAndCreateNoStore) {
  test::TempDir dir;
  const std::string db = "--db " + shell_quote(dir / "x.db") + " ";
  struct Case {
    std::string args, expected;
  };
  test::write_file(dir / "bad.json", "{\"cases\": [ {\"workload\": ");
  const std::vector<Case> cases = {
      {"run nosuch",
       "'nosuch' is neither a workload (compress, compress.codec, compress.collective, compress.plan, moe_offload, "
       "moe_train, moe_train.block, moe_train.fold_plan, moe_train.layer, moe_train.lm, moe_train.plan, toolbench"},
      {"run toolbench -p topk=2", "workload 'toolbench' has no axis 'topk'"},
      {"run toolbench -p agent=gpt9", "axis 'agent': 'gpt9' is not allowed (allowed: "},
      {"run toolbench -p trials=many", "axis 'trials': 'many' is not an integer"},
      {"run toolbench -p trials", "expected axis=value"},
      {"run " + shell_quote(dir / "bad.json"), "bad.json: not valid JSON"},
      {"run " + shell_quote(dir / "missing.json"), "missing.json: does not exist"},
      {"run toolbench --filter nomatch", "no case matches --filter"},
      {"run toolbench -p dataset=" + shell_quote(dir / "none.json"), "none.json does not exist"},
      {"run toolbench --bogus", "--bogus"},
      {"run toolbench --timeout nan", "finite"},
      {"report -f pdf", "pdf"},
      {"nosuchcommand", "nosuchcommand"},
      {"--db '' db ls", "--db needs a file name"},
      // Misspellings name the nearest flag, workload, suite, axis or choice.
      {"run toolbench --repetiton 3", "`run` has no option '--repetiton' (did you mean '--repetitions'?)"},
      {"run compres", "(did you mean 'compress'?)"},
      {"run smok", "(did you mean 'smoke'?)"},
      {"run toolbench -p agnet=oracle", "(did you mean 'agent'?)"},
      {"run toolbench -p agent=oracel", "(did you mean 'oracle'?)"},
      {"run compress -p elements=0", "axis 'elements': 0 is out of range"},
      // An alias's mode axis names a benchmark; an axis of another benchmark of the family names its owner.
      {"run compress -p mode=plna",
       "axis 'mode': 'plna' is not allowed (allowed: codec, collective, plan) (did you mean 'plan'?)"},
      {"run compress -p collective=alltoall",
       "axis 'collective' is not an axis of compress.codec; it belongs to compress.collective (mode=collective)"},
      {"run compress.plan -p codec=zstd", "workload 'compress.plan' has no axis 'codec'"},
      {"run toolbench -p agent=openai --dry-run", "agent 'openai' needs a model: -p model=NAME"},
      {"run toolbench -p agent=anthropic -p model=m -p base_url=ftp://x", "base_url 'ftp://x' is not an http"},
      {"list compres",
       "unknown workload or suite 'compres' (workloads: compress, compress.codec, compress.collective, compress.plan, "
       "moe_offload, moe_train, moe_train.block, moe_train.fold_plan, moe_train.layer, moe_train.lm, moe_train.plan, toolbench; suites: "},
      {"list compres", "(did you mean 'compress'?)"},
  };
  for (const auto& c : cases) {
    const auto r = test::run_cli(db + c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args << "\n" << r.err;
    EXPECT_THAT(r.err, HasSubstr(c.expected)) << c.args;
  }
  EXPECT_FALSE(fs::exists(dir / "x.db"));
  const auto no_folder = test::run_cli("--db " + shell_quote(dir / "no" / "such" / "x.db") + " run compress.codec");
  EXPECT_EQ(no_folder.exit_code, 2);
  EXPECT_THAT(no_folder.err, HasSubstr("the folder " + (dir / "no" / "such").string() + " of the store"));
  const auto usage = test::run_cli("run");
  EXPECT_NE(usage.exit_code, 0);
  EXPECT_THAT(usage.err + usage.out, HasSubstr("target"));
}

// One workload's axes and metrics: `list WORKLOAD`, and after run's options in `run WORKLOAD --help`.
TEST(CliList, OneWorkloadAndRunHelp) {
  const auto one = test::run_cli("list compress");
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_THAT(one.out, AllOf(HasSubstr("compress"), HasSubstr("codec"), HasSubstr("elements (int, default 4194304, data)"),
                             HasSubstr("ratio"), HasSubstr("smoke")));
  EXPECT_THAT(one.out, ::testing::Not(HasSubstr("moe_offload —")));
  const auto help = test::run_cli("run moe_offload --help");
  ASSERT_EQ(help.exit_code, 0) << help.err;
  EXPECT_THAT(help.out, AllOf(HasSubstr("--repetitions"), HasSubstr("policy"), HasSubstr("hit_rate")));
  EXPECT_THAT(help.out, Not(HasSubstr("Suites:")));  // no suite names only this workload
  const auto zero = test::run_cli("run moe_offload --repetitions 0");
  EXPECT_NE(zero.exit_code, 0);
  EXPECT_THAT(zero.err, HasSubstr("--repetitions: Value 0 not in range 1 to 1000000"));
  // A suite's name lists the suite and the workloads it runs.
  const auto suite = test::run_cli("list smoke");
  ASSERT_EQ(suite.exit_code, 0) << suite.err;
  EXPECT_THAT(suite.out, AllOf(HasSubstr("smoke —"), HasSubstr("toolbench —"), HasSubstr("moe_offload —"),
                               Not(HasSubstr("aa-check"))));
}

// Every workload's examples (`list WORKLOAD`) are runnable as printed from the project root: each plans
// (--dry-run) without an error. The LLM example needs a key in the environment; the published dataset
// needs ../shared.
TEST(CliList, EveryWorkloadsExamplesPlanFromTheProjectRoot) {
  const auto list = test::run_cli("list --json");
  ASSERT_EQ(list.exit_code, 0) << list.err;
  int examples = 0;
  const auto catalog = nlohmann::json::parse(list.out);
  for (const auto& w : catalog["workloads"]) {
    EXPECT_GE(w["examples"].size(), 3u) << w["name"];
    const auto text = test::run_cli("list " + w["name"].get<std::string>());
    for (const auto& e : w["examples"]) {
      const std::string example = e.get<std::string>();
      EXPECT_THAT(text.out, HasSubstr("      mlsysbench " + example + "\n"));
      if (example.find("../shared") != std::string::npos && !fs::exists(test::shared_dir())) continue;
      const auto r = test::run_shell("cd " + shell_quote(test::source_dir()) + " && OPENAI_API_KEY=sk-test " +
                                     shell_quote(test::binary()) + " " + example + " --dry-run");
      EXPECT_EQ(r.exit_code, 0) << example << ": " << r.err;
      ++examples;
    }
  }
  EXPECT_GE(examples, 12);
}

TEST(CliRun, DryRunPrintsTheCases) {
  const auto r = test::run_cli("run toolbench -p trials=1,2 --repetitions 3 --dry-run");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, AllOf(HasSubstr("toolbench/"), HasSubstr("trials=1"), HasSubstr("trials=2"),
                           HasSubstr("samples 3..3"), HasSubstr("2 case(s)")));
}

TEST(CliRun, DryRunSaysWhatWillSkipAndWarnsOfUnusedValues) {
  std::string why;
  if (!cuda::cuda_available(&why)) {  // a cuda case skips for want of a GPU: the dry run says so
    const auto r = test::run_cli("run moe_train.layer --backend cuda -p dtype=bf16 --dry-run");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_THAT(r.out, HasSubstr("will be skipped: backend cuda: no usable GPU"));
  }
  const auto r = test::run_cli("run moe_train.lm -p accumulate=limited --dry-run");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("mlsysbench: warning: -p accumulate applies only where precision is"));
  EXPECT_THAT(r.out, HasSubstr("1 case(s)"));
}

TEST(CliStore, DbRmRefusesARunStillMarkedRunningUnlessForced) {
  test::TempDir dir;
  {
    reports::Store store(dir / "r.db");
    reports::RunRecord run;  // as a killed process leaves it
    run.uuid = "0b9d6f50-0000-4000-8000-000000000001";
    run.suite = "smoke";
    store.begin_run(run);
  }
  const std::string db = "--db " + shell_quote(dir / "r.db") + " ";
  const auto refused = test::run_cli(db + "db rm 0b9d6f50");
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_THAT(refused.err, HasSubstr("still running"));
  EXPECT_THAT(test::run_cli(db + "db ls").out, HasSubstr("0b9d6f50"));
  EXPECT_EQ(test::run_cli(db + "db rm --force 0b9d6f50").exit_code, 0);
  EXPECT_THAT(test::run_cli(db + "db ls").out, ::testing::Not(HasSubstr("0b9d6f50")));
}

TEST(CliStore, NotSqliteFileIsReportedAndLeftIntact) {
  test::TempDir dir;
  const std::string garbage = "this is not a database, it is a text file\n";
  test::write_file(dir / "notes.db", garbage);
  for (const std::string args : {"run smoke", "report latest --format json", "db ls"}) {
    const auto r = test::run_cli("--db " + shell_quote(dir / "notes.db") + " " + args);
    EXPECT_EQ(r.exit_code, 2) << args;
    EXPECT_THAT(r.err, AllOf(HasSubstr("notes.db"), HasSubstr("not an SQLite database"))) << args;
  }
  EXPECT_EQ(test::read_file(dir / "notes.db"), garbage);
  const auto missing = test::run_cli("--db " + shell_quote(dir / "none.db") + " report latest");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_THAT(missing.err, HasSubstr("none.db"));
}

TEST(CliEndToEnd, SmokeRunsReportsAndCompares) {
  skip_without_servers();
  test::TempDir dir;
  const std::string db = "--db " + shell_quote(dir / "r.db") + " ";
  const auto full = test::run_cli(db + "run smoke --tag full");
  ASSERT_EQ(full.exit_code, 0) << full.err;
  // A swept axis names every case of the sweep, the one at the default value included.
  EXPECT_THAT(full.err, AllOf(HasSubstr("[1/9] toolbench/agent=oracle  ok"), HasSubstr("[2/9] toolbench/agent=heuristic  ok"),
                              HasSubstr("pass_at_1"),
                              HasSubstr("compress.codec/codec=exponent,elements=1048576  ok"),
                              HasSubstr("compress.codec/codec=int8-block,elements=1048576  ok"),
                              HasSubstr("moe_train.layer/ffn=512,hidden=256,tokens=1024  ok"), HasSubstr("moe_train.lm/batch=8,"),
                              HasSubstr("moe_offload/experts=8,layers=4,policy=belady,seq_len=32  ok")));
  // The whole smoke run's Markdown fits a pull-request comment without being cut: the floor agent's failures
  // fold into one row per task.
  const auto md = test::run_cli(db + "report full --format md");
  ASSERT_EQ(md.exit_code, 0) << md.err;
  EXPECT_LT(md.out.size(), 60000u);
  EXPECT_THAT(md.out, Not(HasSubstr("**Cut here**")));
  // The comparisons below gate on toolbench's deterministic score, not on timings of a busy machine.
  for (const std::string tag : {"base", "cand"}) {
    const auto r = test::run_cli(db + "run smoke --filter '^toolbench/agent=oracle' -p limit=8 --tag " + tag);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_THAT(r.err, HasSubstr("[1/1] toolbench/agent=oracle,limit=8  ok"));
  }
  for (const std::string fmt : {"html", "json", "md", "gbench"}) {
    const auto r = test::run_cli(db + "report cand --format " + fmt + " -o " + shell_quote(dir / ("r." + fmt)));
    ASSERT_EQ(r.exit_code, 0) << fmt << r.err;
    EXPECT_GT(fs::file_size(dir / ("r." + fmt)), 200u) << fmt;
  }
  const auto report = nlohmann::json::parse(test::read_file(dir / "r.json"));
  EXPECT_EQ(report["schema"], "mlsysbench.report/1");
  // Without -f: the output file's extension names the format; on a terminal (a pty from script(1)), a text
  // summary of the run instead of HTML.
  ASSERT_EQ(test::run_cli(db + "report cand -o " + shell_quote(dir / "x.json")).exit_code, 0);
  EXPECT_EQ(nlohmann::json::parse(test::read_file(dir / "x.json"))["schema"], "mlsysbench.report/1");
  ASSERT_EQ(test::run_cli(db + "report cand -o " + shell_quote(dir / "x.md")).exit_code, 0);
  EXPECT_THAT(test::read_file(dir / "x.md"), HasSubstr("# mlsysbench report"));
  const auto tty = test::run_shell("script -qec " + shell_quote(std::string(MLSB_BINARY) + " " + db + "report cand") +
                                   " /dev/null");
  EXPECT_EQ(tty.exit_code, 0) << tty.out << tty.err;
  EXPECT_THAT(tty.out, AllOf(HasSubstr("[ok] toolbench"), Not(HasSubstr("<html"))));
  EXPECT_THAT(test::read_file(dir / "r.html"), AllOf(HasSubstr("<table"), HasSubstr("pass_at_1")));
  const auto aa = test::run_cli(db + "compare base cand --fail-on-regression --all");
  EXPECT_EQ(aa.exit_code, 0) << aa.out << aa.err;
  EXPECT_THAT(aa.out, AllOf(HasSubstr("pass_at_1"), HasSubstr("same")));
  const auto disjoint = test::run_cli(db + "run smoke --filter '^toolbench/agent=oracle' --tag other -p limit=2");
  ASSERT_EQ(disjoint.exit_code, 0) << disjoint.err;
  const auto nothing = test::run_cli(db + "compare base other --fail-on-regression");
  EXPECT_EQ(nothing.exit_code, 1);
  EXPECT_THAT(nothing.err, HasSubstr("nothing was compared"));
  EXPECT_THAT(nothing.out, AllOf(HasSubstr("nothing was compared"), Not(HasSubstr("regression: no"))));
  EXPECT_EQ(test::run_cli(db + "db rm other").exit_code, 0);
  const auto ls = test::run_cli(db + "db ls");
  EXPECT_THAT(ls.out, AllOf(HasSubstr("smoke"), HasSubstr("base"), HasSubstr("cand")));
  const auto show = test::run_cli(db + "db show base");
  EXPECT_THAT(show.out, AllOf(HasSubstr("[ok] toolbench"), HasSubstr("cpu_model")));
  EXPECT_EQ(test::run_cli(db + "db rm base").exit_code, 0);
  EXPECT_THAT(test::run_cli(db + "db ls").out, ::testing::Not(HasSubstr("base")));
  const auto gone = test::run_cli(db + "report base");
  EXPECT_EQ(gone.exit_code, 2);
  EXPECT_THAT(gone.err, HasSubstr("no run matches 'base'"));
  const auto past = test::run_cli(db + "report cand~3");
  EXPECT_EQ(past.exit_code, 2);
  EXPECT_THAT(past.err, HasSubstr("'cand~3' goes back past the oldest run: ")) << past.err;
  EXPECT_THAT(past.err, HasSubstr(" holds 1 'cand' run, so cand~0 is the oldest")) << past.err;
}

// Starts `mlsysbench run toolbench` on the authored dataset's first 4 tasks with trials=1,2,3 (three cases,
// the first done in seconds) writing `db`, its stderr silenced and, when `tmp` is given, TMPDIR=tmp. The
// child's pid (negative when fork failed).
pid_t start_toolbench_run(const fs::path& db, const fs::path& tmp = {}) {
  const std::string bin = test::binary().string(), dataset = "dataset=" + authored_dataset().string();
  const pid_t pid = fork();
  if (pid == 0) {
    freopen("/dev/null", "w", stderr);
    if (!tmp.empty()) setenv("TMPDIR", tmp.c_str(), 1);
    execl(bin.c_str(), bin.c_str(), "--db", db.c_str(), "run", "toolbench", "-p", dataset.c_str(), "-p", "limit=4",
          "-p", "trials=1,2,3", static_cast<char*>(nullptr));
    _exit(127);
  }
  return pid;
}

// Waits up to 120 s for the newest run in `db` to hold a case that `ready` accepts (given its cases);
// that run's id, or 0.
int64_t wait_for_cases(const fs::path& db, const std::function<bool(const std::vector<reports::CaseRecord>&)>& ready) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    if (!fs::exists(db)) continue;
    try {
      reports::Store store(db, true);
      const auto runs = store.list_runs(1);  // `latest` skips a run still in progress
      if (!runs.empty() && ready(store.load_run(runs[0].id).cases)) return runs[0].id;
    } catch (const std::exception&) {
    }
  }
  return 0;
}

// The newest run once its first case has ended (a case in flight is stored as "running").
int64_t wait_for_first_case(const fs::path& db) {
  return wait_for_cases(db, [](const auto& cases) { return !cases.empty() && cases[0].status != reports::CaseStatus::Running; });
}

TEST(CliRun, CtrlCLeavesRunInterruptedWithFinishedCasesKept) {
  skip_without_servers();
  test::TempDir dir;
  const fs::path db = dir / "r.db";
  const pid_t pid = start_toolbench_run(db);
  ASSERT_GE(pid, 0);
  // Wait until the first case is committed, then press Ctrl-C.
  ASSERT_GT(wait_for_first_case(db), 0) << "no case finished in time";
  kill(pid, SIGINT);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 130);
  reports::Store store(db, true);
  const auto run = store.load_run(*store.resolve_run("latest"));
  EXPECT_EQ(run.run.status, reports::RunStatus::Interrupted);
  ASSERT_GE(run.cases.size(), 1u);
  EXPECT_LT(run.cases.size(), 3u + 1);
  EXPECT_EQ(run.cases[0].status, reports::CaseStatus::Ok);
  EXPECT_FALSE(run.cases[0].items.empty());
}

// A run killed outright (SIGKILL: no handler runs) stays "running" in its store until the next command
// opens the store and finds its process gone: then it is interrupted, with the reason, its finished
// cases kept, and so are the task trials its case in flight had finished (committed as they end); the
// next run removes the case folder the killed process left in the temp folder.
TEST(CliRun, KilledRunIsMarkedInterruptedByTheNextCommand) {
  skip_without_servers();
  test::TempDir dir;
  const fs::path db = dir / "r.db", tmp = dir / "tmp";
  fs::create_directories(tmp);
  const pid_t pid = start_toolbench_run(db, tmp);
  ASSERT_GE(pid, 0);
  // The second case (8 task trials) is in flight with some of its trials stored.
  const int64_t run_id = wait_for_cases(db, [](const auto& cases) {
    return cases.size() == 2 && cases[1].status == reports::CaseStatus::Running && !cases[1].items.empty();
  });
  ASSERT_GT(run_id, 0) << "no case in flight with stored items in time";
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status));
  const std::string leftover = "mlsb-case-" + std::to_string(pid) + "-";
  const auto leftovers = [&] {
    int n = 0;
    for (const auto& e : fs::directory_iterator(tmp)) n += e.path().filename().string().starts_with(leftover);
    return n;
  };
  EXPECT_EQ(leftovers(), 1);  // the case in flight's folder
  const auto ls = test::run_cli("--db " + shell_quote(db) + " db ls");
  ASSERT_EQ(ls.exit_code, 0) << ls.err;
  EXPECT_THAT(ls.out, HasSubstr("interrupted"));
  const auto show = test::run_cli("--db " + shell_quote(db) + " db show " + std::to_string(run_id));
  EXPECT_THAT(show.out, AllOf(HasSubstr("status:   interrupted  — its process (pid " + std::to_string(pid)),
                              HasSubstr("is gone: killed")));
  {
    reports::Store store(db, true);
    const auto run = store.load_run(run_id);
    EXPECT_EQ(run.run.status, reports::RunStatus::Interrupted);
    EXPECT_GT(run.run.finished_at, run.run.started_at);
    ASSERT_GE(run.cases.size(), 2u);
    EXPECT_EQ(run.cases[0].status, reports::CaseStatus::Ok);
    EXPECT_EQ(run.cases[0].items.size(), 4u);  // 4 tasks, 1 trial each
    EXPECT_EQ(run.cases[1].status, reports::CaseStatus::Interrupted);
    EXPECT_THAT(run.cases[1].reason, HasSubstr("killed or crashed while it ran"));
    EXPECT_GE(run.cases[1].items.size(), 1u);  // the trials it finished before the kill
    EXPECT_LE(run.cases[1].items.size(), 8u);
    for (const auto& [key, item] : run.cases[1].items) EXPECT_TRUE(item.contains("pass")) << key;
  }
  const auto next = test::run_shell("TMPDIR=" + shell_quote(tmp) + " " + shell_quote(test::binary()) + " --db " + shell_quote(db) +
                                    " run compress -p elements=1K --repetitions 1");
  EXPECT_EQ(next.exit_code, 0) << next.err;
  EXPECT_EQ(leftovers(), 0);
}

// The 241 published filesystem tasks (MCPToolBench++) with the oracle against the real server, through
// the CLI: every task's item stored, each failure an honest disagreement of label and fixture.
TEST(CliEndToEnd, AllRealFilesystemTasksAreStored) {
  skip_without_servers();
  const fs::path dataset = test::shared_dir() / "mcptoolbench/data/file_system/filesystem_0723_single.json";
  if (!fs::exists(dataset)) GTEST_SKIP() << "no " << dataset;
  test::TempDir dir;
  const std::string db = "--db " + shell_quote(dir / "r.db") + " ";
  const auto r = test::run_cli(db + "run toolbench -p dataset=" + shell_quote(dataset) +
                                    " -p agent=oracle -p concurrency=4");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  reports::Store store(dir / "r.db", true);
  const auto run = store.load_run(*store.resolve_run("latest"));
  ASSERT_EQ(run.cases.size(), 1u);
  const auto& c = run.cases[0];
  EXPECT_EQ(c.status, reports::CaseStatus::Ok) << c.reason;
  EXPECT_EQ(c.items.size(), 241u);
  int failing = 0;
  for (const auto& [key, item] : c.items) {
    if (item.value("pass", false)) continue;
    ++failing;
    // Oracle failures are labels that disagree with the fixture, seen by the real server: an edit whose
    // oldText the file lacks, or a write into a folder the fixture lacks.
    const std::string reason = item.value("reason", "");
    EXPECT_EQ(reason.rfind("execution failed: ", 0), 0u) << key << ": " << reason;
    const bool honest = reason.find("Could not find exact match") != std::string::npos ||
                        reason.find("ENOENT") != std::string::npos;
    EXPECT_TRUE(honest) << key << ": " << reason;
  }
  EXPECT_GT(failing, 0);  // some labels disagree with the fixture
  EXPECT_LT(failing, 241);
  ASSERT_EQ(c.samples.count("pass_at_1"), 1u);
  EXPECT_NEAR(c.samples.at("pass_at_1").at(0), (241.0 - failing) / 241.0, 1e-12);
  EXPECT_EQ(c.samples.at("ast_accuracy").at(0), 1.0);  // the oracle's calls are the labels
  const auto html = test::run_cli(db + "report latest --format html -o " + shell_quote(dir / "r.html"));
  ASSERT_EQ(html.exit_code, 0) << html.err;
  EXPECT_THAT(test::read_file(dir / "r.html"), HasSubstr("filesystem"));
}

}  // namespace
}  // namespace mlsb
