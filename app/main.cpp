// mlsysbench: the command-line driver. It parses arguments and calls library code (harness/, reports/).
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <optional>

#include <CLI/CLI.hpp>

#include "backends/comm/mpi_env.hpp"
#include "harness/alias.hpp"
#include "app/catalog.hpp"
#include "harness/environment.hpp"
#include "harness/machine_key.hpp"
#include "app/mcp_serve.hpp"
#include "harness/plan.hpp"
#include "harness/progress.hpp"
#include "harness/runner.hpp"
#include "harness/suite.hpp"
#include "util/text.hpp"
#include "mcp/tool_server/http_server.hpp"
#include "mcp/tool_server/stdio_server.hpp"
#include "reports/baseline.hpp"
#include "reports/compare.hpp"
#include "reports/history.hpp"
#include "reports/import_gbench.hpp"
#include "reports/import_json.hpp"
#include "reports/render.hpp"
#include "reports/run_listing.hpp"
#include "reports/store.hpp"

namespace {

std::atomic<bool> g_interrupt{false};

void on_signal(int) { g_interrupt = true; }

std::string default_db() {
  if (const char* env = std::getenv("MLSB_DB")) return env;
  return "mlsysbench.db";
}

int64_t resolve(mlsb::reports::Store& store, const std::string& ref) {
  if (auto id = store.resolve_run(ref)) return *id;
  throw std::invalid_argument("no run matches '" + ref + "' in " + store.path().string() +
                              " (use an id, a uuid, a tag, or latest; see `mlsysbench db ls`)");
}

void write_output(const std::string& text, const std::string& path) {
  if (path.empty() || path == "-") {
    std::cout << text;
    return;
  }
  std::ofstream out(path, std::ios::binary);
  if (!out) throw std::runtime_error("cannot write " + path);
  out << text;
  if (!out.flush()) throw std::runtime_error("cannot write " + path);
}

// Runs `body` (given whether this is rank 0) on every rank and returns rank 0's exit code on all of
// them; an exception is reported and gives 2. When the ranks cannot agree (a rank is gone), each
// returns its own code.
int run_ranks(mlsb::RunComms& comms, const std::function<int(bool root)>& body) {
  const bool root = comms.rank() == 0;
  int32_t code = 2;
  try {
    code = body(root);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mlsysbench: error: %s%s\n", root ? "" : ("rank " + std::to_string(comms.rank()) + ": ").c_str(),
                 e.what());
  }
  const bool several = comms.control->size() > 1;
  if (several && (g_interrupt || code == 130)) {
    // A signal: peers may be anywhere (in a case, in an agreement), so MPI_Finalize could wait forever.
    // Rank 0 has stored what it has; the others, told of the signal by rank 0's vote, give it up to
    // 30 s to do so. A signalled rank makes no more MPI calls (requests of its abandoned case may still
    // be in flight): rank 0 learns of it when the job ends. Then the job ends.
    if (!root && !g_interrupt) {
      try {
        comms.control->set_cancel_flag(nullptr);
        comms.control->set_timeout(30);
        comms.control->broadcast(&code, 1, mlsb::comm::ElemType::I32, 0);
      } catch (const std::exception&) {
      }
    }
    std::fflush(stdout);
    std::fflush(stderr);
    mlsb::comm::mpi_env::abort_job(130);
  }
  try {
    comms.control->set_timeout(120);
    comms.control->broadcast(&code, 1, mlsb::comm::ElemType::I32, 0);
  } catch (const std::exception&) {
  }
  return code;
}

std::string join_argv(int argc, char** argv) {
  std::string s;
  for (int i = 0; i < argc; ++i) s += (i ? " " : "") + std::string(argv[i]);
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  // Runs stored before a workload became a family of benchmarks read back under the benchmarks' names.
  mlsb::reports::set_case_renamer([](std::string& workload, nlohmann::json& params, std::string& key,
                                     std::string& label) {
    if (auto name = mlsb::rename_stored_case(workload, params, label)) {
      workload = std::move(name->workload);
      params = std::move(name->params);
      key = std::move(name->params_key);
      label = std::move(name->label);
    }
  });
  CLI::App app{"mlsysbench: benchmarks and agent-tool evaluation for large-model systems.\n"
               "Results go to an SQLite store (--db, $MLSB_DB, default ./mlsysbench.db)."};
  app.require_subcommand(1);
  app.fallthrough();  // global options (--db) may also follow the subcommand: `run X --db r.db`
  app.set_version_flag("--version", MLSB_VERSION);
  std::string db = default_db();
  app.add_option("--db", db, "results store (SQLite file); default $MLSB_DB or ./mlsysbench.db")
      ->check(CLI::Validator([](std::string& v) { return v.empty() ? "--db needs a file name" : ""; }, "FILE"));

  // A tag is a run name: it must not be empty or read as another kind of name (an id, latest, NAME~N).
  const CLI::Validator tag_name(
      [](std::string& v) -> std::string {
        if (v.empty()) return "a tag must not be empty";
        if (v.find_first_not_of("0123456789") == std::string::npos) return "a tag must not be all digits (it would read as a run id): " + v;
        if (v == "latest" || v.starts_with("latest~")) return "'" + v + "' names the newest run; choose another tag";
        if (v.find('~') != std::string::npos) return "a tag must not contain '~' (TAG~N names earlier runs): " + v;
        return "";
      },
      "TAG");

  // list
  auto* list = app.add_subcommand("list", "show workloads (axes, defaults, metrics, units) and suites");
  bool list_json = false;
  std::string list_workload;
  list->add_flag("--json", list_json, "print as JSON");
  list->add_option("workload", list_workload, "only this workload (its axes, metrics and the suites that run it)");

  // run
  auto* run = app.add_subcommand("run", "run a suite (name or .json file) or one workload");
  std::string target;
  std::vector<std::string> axis_specs, tags;
  std::optional<int> repetitions, warmup;
  std::optional<double> max_time, timeout;
  uint64_t seed = 1;
  std::string backend = "cpu", comm_kind = "auto", filter, run_branch;
  bool dry_run = false;
  run->add_option("target", target, "suite name, suite file (*.json) or workload name")->required();
  run->add_option("-p,--param", axis_specs, "axis override, axis=v1,v2 (repeatable); e.g. -p agent=oracle");
  run->add_option("--repetitions", repetitions, "measured samples per case (fixes min and max samples)")
      ->check(CLI::PositiveNumber);
  run->add_option("--warmup", warmup, "untimed warm-up samples per case")->check(CLI::NonNegativeNumber);
  const CLI::Validator finite_positive(
      [](std::string& v) {
        const double d = std::strtod(v.c_str(), nullptr);
        return std::isfinite(d) && d > 0 ? std::string() : "must be a finite number > 0, got " + v;
      },
      "SECONDS");
  run->add_option("--max-time", max_time, "stop sampling a case after this many seconds")->check(finite_positive);
  run->add_option("--timeout", timeout, "fail a case still running after this many seconds")->check(finite_positive);
  run->add_option("--seed", seed, "run seed; every case's data derives from it (default 1)");
  run->add_option("--tag", tags, "tag the run (repeatable); compare and report accept tags as run names")
      ->check(tag_name);
  run->add_option("--backend", backend,
                  "device backend: cpu | cuda | auto (cuda where the workload has a cuda path and a GPU is "
                  "present, else cpu); a case without the backend is skipped (default cpu)")
      ->check(CLI::IsMember({"cpu", "cuda", "auto"}));
  run->add_option("--comm", comm_kind,
                  "communicator: auto | local | mpi | nccl (auto = mpi when started by mpirun/srun, else "
                  "local); under MPI every rank runs each case and rank 0 alone writes the store")
      ->check(CLI::IsMember({"auto", "local", "mpi", "nccl"}));
  run->add_option("--filter", filter, "run only cases whose id (workload/axis=value,...) matches this regex");
  run->add_flag("--dry-run", dry_run, "print the cases and exit");
  run->add_option("--branch", run_branch, "record the run under this branch (default: the git branch; under "
                                          "GitHub Actions GITHUB_HEAD_REF or GITHUB_REF_NAME)");

  // report
  auto* report = app.add_subcommand("report", "render a stored run as html, json, md, gbench, or for CI dashboards "
                                              "as bmf (Bencher) or gab / gab-bigger (github-action-benchmark)");
  std::string report_run = "latest", report_format = "html", report_out;
  report->add_option("run", report_run, "run id, uuid, tag or latest (default latest)");
  report->add_option("-f,--format", report_format,
                     "html | json | md | gbench | bmf | gab (lower-is-better metrics) | gab-bigger (higher-is-better)")
      ->check(CLI::IsMember({"html", "json", "md", "gbench", "bmf", "gab", "gab-bigger"}));
  report->add_option("-o,--output", report_out, "output file (default: stdout)");

  // compare
  auto* compare = app.add_subcommand("compare", "compare two runs case by case and flag regressions");
  std::vector<std::string> compare_refs;
  std::string baseline_ref, compare_format = "text", compare_out;
  int history_runs = 0;
  bool strict_env = false, compare_all = false;
  mlsb::reports::CompareOptions copts;
  bool fail_on_regression = false;
  compare->add_option("runs", compare_refs, "BASE CANDIDATE, or only CANDIDATE with --baseline (id, uuid, tag, "
                                            "TAG~N, latest, latest~N)")
      ->expected(1, 2)
      ->required();
  compare->add_option("--baseline", baseline_ref,
                      "auto: the newest ok run of the candidate's suite, machine key and branch with another git "
                      "sha (none yet: exit 0 with a note); or a run name");
  compare->add_option("--history", history_runs,
                      "also t-test the candidate against the medians of the N newest comparable runs (same suite, "
                      "machine key and branch, another git sha): worse only when both tests say so")
      ->check(CLI::Range(0, 100000));
  compare->add_flag("--strict-env", strict_env,
                    "exit 3 when the baseline's machine key, GPU driver, CUDA runtime, build type or flags differ");
  compare->add_option("--threshold", copts.threshold, "relative change that counts (default 0.05 = 5%)")
      ->check(CLI::Range(0.0, 10.0));
  compare->add_option("--alpha", copts.alpha, "significance level of the Mann-Whitney U test (default 0.05)")
      ->check(CLI::Range(0.0, 1.0));
  compare->add_option("--run-noise", copts.run_noise,
                      "run-to-run noise assumed without --history: a smaller change is noisy (default 0.25)")
      ->check(CLI::Range(0.0, 10.0));
  compare->add_flag("--fail-on-regression", fail_on_regression,
                    "exit 1 when a primary metric got worse, a case ok in the base failed or timed out, "
                    "or no case could be compared");
  compare->add_option("-f,--format", compare_format, "text | json | md | html")
      ->check(CLI::IsMember({"text", "json", "md", "html"}));
  compare->add_flag("--all", compare_all, "md and html: every row, not only the primary metrics that changed");
  compare->add_option("-o,--output", compare_out, "output file (default: stdout)");

  // history
  auto* history = app.add_subcommand("history", "a metric's medians over the stored runs of one suite, machine "
                                                "and branch, with step (change-point) detection");
  mlsb::reports::HistoryQuery hq;
  mlsb::reports::StepOptions step_opts;
  std::string history_format = "text", history_out;
  bool detect = false, history_fail = false;
  history->add_option("--suite", hq.suite, "the suite (or workload of a plain run); required when several match");
  history->add_option("--tag", hq.tag, "only runs carrying this tag");
  history->add_option("--filter", hq.filter, "only cases whose id (workload/axis=value,...) matches this regex");
  history->add_option("--metric", hq.metric, "primary (default: each case's primary metric), all, or a metric name");
  history->add_option("--machine", hq.machine, "auto (the newest matching run's machine key) or a key (mlsysbench env)");
  history->add_option("--branch", hq.branch, "auto (the newest matching run's branch) or a branch");
  history->add_option("--last", hq.last, "only the newest N runs (default all)")->check(CLI::NonNegativeNumber);
  history->add_flag("--detect", detect, "find steps (change points) and the regressions still standing");
  history->add_option("--threshold", step_opts.threshold, "relative step below which it is no regression (default 0.05)")
      ->check(CLI::Range(0.0, 10.0));
  history->add_flag("--fail-on-regression", history_fail,
                    "(implies --detect) exit 1 when a primary metric has a regression still standing");
  history->add_option("-f,--format", history_format, "text | json | md | html")
      ->check(CLI::IsMember({"text", "json", "md", "html"}));
  history->add_option("-o,--output", history_out, "output file (default: stdout)");

  // import
  auto* import = app.add_subcommand("import", "store results produced elsewhere as a run");
  import->require_subcommand(1);
  auto* import_gbench = import->add_subcommand("gbench", "a Google Benchmark JSON file (--benchmark_out=F "
                                                          "--benchmark_out_format=json)");
  std::string gbench_file;
  std::vector<std::string> import_tags;
  import_gbench->add_option("file", gbench_file, "the JSON file")->required();
  import_gbench->add_option("--tag", import_tags, "tag the run (repeatable)")->check(tag_name);
  auto* import_json = import->add_subcommand("json", "a JSON report of mlsysbench (report --format json), samples "
                                                      "included; the run keeps its uuid");
  std::string json_report_file;
  import_json->add_option("file", json_report_file, "the JSON report")->required();
  import_json->add_option("--tag", import_tags, "add a tag to the run (repeatable)")->check(tag_name);

  // mcp-serve
  auto* serve = app.add_subcommand("mcp-serve", "serve the harness as MCP tools (list, run, report, compare) "
                                                "over stdio, or Streamable HTTP with --http");
  bool serve_http = false;
  std::string serve_host = "127.0.0.1";
  int serve_port = 0;
  serve->add_flag("--http", serve_http, "Streamable HTTP at http://HOST:PORT/mcp instead of stdio");
  serve->add_option("--host", serve_host, "address to bind with --http (default 127.0.0.1)");
  serve->add_option("--port", serve_port, "port with --http (default 0: any free port, printed on stderr)")
      ->check(CLI::Range(0, 65535));

  // env
  auto* env = app.add_subcommand("env", "print the environment a run would record (JSON)");

  // db
  auto* dbcmd = app.add_subcommand("db", "inspect the results store");
  dbcmd->require_subcommand(1);
  auto* db_ls = dbcmd->add_subcommand("ls", "list runs, newest first");
  int ls_limit = 20;
  db_ls->add_option("-n,--limit", ls_limit, "at most this many runs (0 = all; default 20)");
  auto* db_show = dbcmd->add_subcommand("show", "show one run: metadata, environment and cases");
  std::string show_ref = "latest";
  db_show->add_option("run", show_ref, "run id, uuid, tag or latest");
  auto* db_rm = dbcmd->add_subcommand("rm", "delete runs and everything recorded under them");
  std::vector<std::string> rm_refs;
  bool rm_force = false;
  db_rm->add_option("runs", rm_refs, "run ids, uuids or tags")->required();
  db_rm->add_flag("--force", rm_force, "also delete runs still marked running (e.g. left by a killed process)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // A mistyped command reads better named than as "a subcommand is required".
    for (int i = 1; i < argc; ++i) {
      const std::string arg = argv[i];
      if (arg == "--db") ++i;
      if (arg.empty() || arg[0] == '-') continue;
      const auto subs = app.get_subcommands([&](const CLI::App* sub) { return sub->get_name() == arg; });
      if (!subs.empty()) break;
      std::fprintf(stderr, "mlsysbench: unknown command '%s' (commands: list, run, report, compare, history, import, mcp-serve, env, db)\n",
                   arg.c_str());
      return 2;
    }
    // A mistyped option: name the nearest option of the command it was given to.
    if (dynamic_cast<const CLI::ExtrasError*>(&e)) {
      const CLI::App* cmd = &app;
      for (const CLI::App* sub = &app; sub;) {
        const auto used = sub->get_subcommands();
        sub = used.empty() ? nullptr : used.front();
        if (sub) cmd = sub;
      }
      std::vector<std::string> names;
      for (const CLI::App* a : {cmd, static_cast<const CLI::App*>(&app)})
        for (const CLI::Option* o : a->get_options()) {
          for (const auto& n : o->get_lnames()) names.push_back("--" + n);
          for (const auto& n : o->get_snames()) names.push_back("-" + n);
        }
      for (int i = 1; i < argc; ++i) {
        std::string arg = argv[i];
        if (arg.size() < 2 || arg[0] != '-') continue;
        arg = arg.substr(0, arg.find('='));
        if (std::find(names.begin(), names.end(), arg) != names.end()) continue;
        std::fprintf(stderr, "mlsysbench: error: %s has no option '%s'%s (see %s --help)\n",
                     cmd == &app ? "mlsysbench" : ("`" + cmd->get_name() + "`").c_str(), arg.c_str(),
                     mlsb::did_you_mean(arg, names).c_str(),
                     cmd == &app ? "mlsysbench" : ("mlsysbench " + cmd->get_name()).c_str());
        return 2;
      }
    }
    const int rc = app.exit(e);  // prints help/version (rc 0) or the error
    // `run WORKLOAD --help`: the workload's axes and metrics after run's options.
    if (dynamic_cast<const CLI::CallForHelp*>(&e) && *run && !target.empty()) try {
        std::cout << "\n" << mlsb::catalog_text(mlsb::workload_catalog(mlsb::catalog_json({}), target));
      } catch (const std::invalid_argument&) {  // a suite or a file: run's help alone
      }
    return rc == 0 ? 0 : 2;      // every usage error is bad input: exit 2, as for other bad input
  }

  try {
    const auto suite_dirs = mlsb::default_suite_dirs();
    if (*list) {
      auto catalog = mlsb::catalog_json(suite_dirs);
      if (!list_workload.empty()) catalog = mlsb::workload_catalog(catalog, list_workload);
      std::cout << (list_json ? catalog.dump(2) + "\n" : mlsb::catalog_text(catalog));
      return 0;
    }
    if (*env) {
      auto e = mlsb::capture_environment();
      e["machine_key"] = mlsb::machine_key(e);
      e["machine"] = mlsb::machine_description(e);
      std::cout << e.dump(2) << "\n";
      return 0;
    }
    if (*serve) {
      for (int sig : {SIGINT, SIGTERM, SIGHUP}) std::signal(sig, on_signal);
      mlsb::mcp::ToolServer server("mlsysbench", MLSB_VERSION, mlsb::harness_tools(db, suite_dirs, g_interrupt));
      if (!serve_http) return mlsb::mcp::serve_stdio(server, g_interrupt);
      mlsb::mcp::HttpServeOptions http;
      http.host = serve_host;
      http.port = serve_port;
      http.on_listening = [&](const std::string& url) {
        std::fprintf(stderr, "mlsysbench mcp-serve: listening on %s (store %s)\n", url.c_str(), db.c_str());
      };
      return mlsb::mcp::serve_http(server, http, g_interrupt);
    }
    if (*run) {
      mlsb::RunnerOverrides ro;
      if (repetitions) ro.set_repetitions(*repetitions);
      ro.warmup = warmup;
      if (max_time) ro.max_time_s = max_time;
      ro.timeout_s = timeout;
      const auto plan =
          mlsb::build_plan(target, suite_dirs, mlsb::parse_axis_overrides(axis_specs), ro, filter);
      if (plan.cases.empty()) throw std::invalid_argument("no case matches --filter '" + filter + "'");
      if (dry_run) {
        for (const auto& c : plan.cases) {
          const auto& r = c.runner;
          std::printf("%s\n    %s\n    warmup %d, samples %d..%d, min time %g s, noise bound %g%%, "
                      "time limit %g s, timeout %g s\n",
                      c.display_name().c_str(), c.id().c_str(), r.warmup, r.min_samples, r.max_samples,
                      r.min_time_s, r.max_noise * 100, r.max_time_s, r.timeout_s);
        }
        std::printf("%zu case(s)\n", plan.cases.size());
        return 0;
      }
      mlsb::RunComms comms = mlsb::RunComms::create(comm_kind);
      for (int sig : {SIGINT, SIGTERM, SIGHUP}) std::signal(sig, on_signal);
      return run_ranks(comms, [&](bool root) {
        // Rank 0 alone opens and writes the store; it tells the others whether that worked.
        std::optional<mlsb::reports::Store> store;
        std::string store_error;
        try {
          if (root) store.emplace(db);
        } catch (const std::exception& e) {
          store_error = e.what();
        }
        int32_t ok = store_error.empty() ? 1 : 0;
        comms.control->broadcast(&ok, 1, mlsb::comm::ElemType::I32, 0);
        if (!ok) {
          if (root) std::fprintf(stderr, "mlsysbench: error: %s\n", store_error.c_str());
          return 2;
        }
        std::optional<mlsb::Progress> progress;
        if (root) {
          std::vector<std::pair<std::string, std::string>> keys;
          for (const auto& c : plan.cases) keys.emplace_back(c.workload, mlsb::params_key(c.params));
          const std::vector<double> last = store->last_case_seconds(keys);
          std::vector<mlsb::PlannedCase> planned;
          for (size_t i = 0; i < plan.cases.size(); ++i)
            planned.push_back({plan.cases[i].workload, last[i], plan.cases[i].expected_s});
          progress.emplace(stderr, isatty(STDERR_FILENO), std::move(planned));
        }
        mlsb::RunOptions opts;
        opts.seed = seed;
        opts.tags = tags;
        opts.argv = join_argv(argc, argv);
        opts.backend = backend;
        opts.comm = comm_kind;
        opts.branch = run_branch;
        const auto out = mlsb::run_plan(plan, opts, store ? &*store : nullptr, progress ? &*progress : nullptr,
                                        g_interrupt, comms);
        if (!root) return 0;  // rank 0's exit code is everyone's
        std::fprintf(stderr,
                     "run %lld (%s) %s: %d ok, %d failed, %d timed out, %d skipped; stored in %s\n"
                     "report: mlsysbench --db %s report %lld --format html -o report.html\n",
                     static_cast<long long>(out.run_id), out.uuid.c_str(), mlsb::reports::status_name(out.status).c_str(), out.ok, out.failed,
                     out.timed_out, out.skipped, db.c_str(), db.c_str(), static_cast<long long>(out.run_id));
        if (out.status == mlsb::reports::RunStatus::Interrupted) return 130;
        if (out.status == mlsb::reports::RunStatus::Ok && out.ok == 0) {
          std::fprintf(stderr, "mlsysbench: every case was skipped (see the reasons above)\n");
          return 1;
        }
        return out.status == mlsb::reports::RunStatus::Ok ? 0 : 1;
      });
    }
    if (*import_gbench) {
      auto data = mlsb::reports::import_gbench(gbench_file);
      for (const auto& t : import_tags) data.run.tags.push_back(t);
      mlsb::reports::Store store(db);
      const int64_t id = store.begin_run(data.run);
      bool failed = false;
      for (auto& c : data.cases) {
        store.add_case(id, c);
        failed = failed || c.status == mlsb::reports::CaseStatus::Failed;
      }
      store.finish_run(id, failed ? mlsb::reports::RunStatus::Failed : mlsb::reports::RunStatus::Ok);
      std::fprintf(stderr, "imported %zu benchmark(s) from %s as run %lld (%s)\n", data.cases.size(),
                   gbench_file.c_str(), static_cast<long long>(id), data.run.uuid.c_str());
      return 0;
    }
    if (*import_json) {
      auto data = mlsb::reports::read_json_report(json_report_file);
      for (const auto& t : import_tags)
        if (std::find(data.run.tags.begin(), data.run.tags.end(), t) == data.run.tags.end()) data.run.tags.push_back(t);
      mlsb::reports::Store store(db);
      const int64_t id = mlsb::reports::store_imported_run(store, data);
      std::fprintf(stderr, "imported run %s (%zu case(s)) from %s as run %lld\n", data.run.uuid.c_str(),
                   data.cases.size(), json_report_file.c_str(), static_cast<long long>(id));
      return 0;
    }
    if (*report) {
      if (report_format == "html" && report_out.empty() && isatty(STDOUT_FILENO))
        throw std::invalid_argument("an HTML report goes to a file: add -o report.html");
      mlsb::reports::Store store(db, /*read_only=*/true);
      const auto data = store.load_run(resolve(store, report_run));
      write_output(mlsb::reports::render(data, mlsb::reports::parse_format(report_format)), report_out);
      if (!report_out.empty() && report_out != "-") std::fprintf(stderr, "wrote %s\n", report_out.c_str());
      return 0;
    }
    if (*compare) {
      namespace rep = mlsb::reports;
      if (compare_refs.size() == 2 && !baseline_ref.empty())
        throw std::invalid_argument("compare: name the base either as the first run or with --baseline, not both");
      if (compare_refs.size() == 1 && baseline_ref.empty())
        throw std::invalid_argument("compare: name two runs (BASE CANDIDATE), or the candidate with --baseline auto");
      rep::Store store(db, /*read_only=*/true);
      const auto cand = store.load_run(resolve(store, compare_refs.back()));
      std::optional<rep::RunRecord> base_run;
      if (baseline_ref == "auto") {
        base_run = rep::find_baseline(store, cand.run);
        if (!base_run) {
          std::fprintf(stderr, "mlsysbench compare: %s\n", rep::no_baseline_note(store, cand.run).c_str());
          return 0;
        }
        std::fprintf(stderr, "baseline: run %lld (%s), git %s\n", static_cast<long long>(base_run->id),
                     base_run->uuid.c_str(), base_run->git_sha.substr(0, 10).c_str());
      }
      const auto base = store.load_run(base_run ? base_run->id : resolve(store, baseline_ref.empty() ? compare_refs.front() : baseline_ref));
      const auto differences = rep::environment_differences(base.run, cand.run);
      if (!differences.empty()) {
        std::string list;
        for (const auto& d : differences) list += "\n  " + d;
        std::fprintf(stderr, "%s: the baseline's environment differs from the candidate's:%s\n",
                     strict_env ? "mlsysbench compare" : "warning", list.c_str());
        if (strict_env) return 3;
      }
      // With --history N the candidate is t-tested against the N newest comparable runs; without it,
      // the last 30 only measure the machine's run-to-run noise.
      copts.history_t_test = history_runs > 0;
      const auto runs = rep::comparable_runs(store, cand.run, history_runs > 0 ? history_runs : 30);
      const rep::HistoryMedians medians = rep::history_medians(store, runs);
      if (history_runs > 0)
        std::fprintf(stderr, "history: %zu comparable run(s) of the last %d asked for\n", runs.size(), history_runs);
      const auto cmp = rep::compare_runs(base, cand, copts, medians);
      write_output(rep::render_comparison(cmp, compare_format, compare_all), compare_out);
      const auto broken = cmp.new_failures();
      for (const auto& c : broken)
        std::fprintf(stderr, "regression: %s/%s was ok in the base and is %s in the candidate\n", c.workload.c_str(),
                     c.params_key.c_str(), rep::status_name(*c.cand_status).c_str());
      if (cmp.has_regression())
        std::fprintf(stderr, "regression: a primary metric got worse (threshold %.3g, alpha %.3g)\n",
                     copts.threshold, copts.alpha);
      for (const auto& c : cmp.lost_primary)
        std::fprintf(stderr, "regression: %s/%s has no samples of its primary metric in the candidate\n",
                     c.workload.c_str(), c.params_key.c_str());
      const bool nothing = cmp.metrics.empty();
      if (nothing)
        std::fprintf(stderr, "mlsysbench: no case ok in both runs: nothing was compared\n");
      if (fail_on_regression && (cmp.has_regression() || !broken.empty() || !cmp.lost_primary.empty() || nothing))
        return 1;
      return 0;
    }
    if (*history) {
      if (history_format == "html" && history_out.empty() && isatty(STDOUT_FILENO))
        throw std::invalid_argument("an HTML history goes to a file: add -o history.html");
      mlsb::reports::Store store(db, /*read_only=*/true);
      auto h = mlsb::reports::load_history(store, hq);
      if (detect || history_fail) mlsb::reports::detect_history(h, step_opts);
      write_output(mlsb::reports::render_history(h, history_format), history_out);
      if (!history_out.empty() && history_out != "-") std::fprintf(stderr, "wrote %s\n", history_out.c_str());
      const auto regressions = mlsb::reports::standing_regressions(h);
      for (const auto& r : regressions)
        std::fprintf(stderr, "regression: %s %s: %+.1f%% from run %lld (git %s -> %s)\n", r.series->name.c_str(),
                     r.series->metric.c_str(), 100 * r.step->change, static_cast<long long>(r.first_run->id),
                     r.last_good->git_sha.substr(0, 10).c_str(), r.first_run->git_sha.substr(0, 10).c_str());
      return history_fail && !regressions.empty() ? 1 : 0;
    }
    if (*db_ls) {
      mlsb::reports::Store store(db, /*read_only=*/true);
      std::cout << mlsb::reports::format_run_list(store.list_run_summaries(ls_limit));
      return 0;
    }
    if (*db_show) {
      mlsb::reports::Store store(db, /*read_only=*/true);
      std::cout << mlsb::reports::format_run_detail(store.load_run(resolve(store, show_ref)));
      return 0;
    }
    if (*db_rm) {
      mlsb::reports::Store store(db);
      std::vector<int64_t> ids;
      for (const auto& ref : rm_refs) ids.push_back(resolve(store, ref));  // all resolve, or none is deleted
      for (const int64_t id : ids)
        if (!rm_force && store.load_run(id).run.status == mlsb::reports::RunStatus::Running)
          throw std::invalid_argument("run " + std::to_string(id) +
                                      " is still running (or its process died): use --force to delete it");
      for (const int64_t id : ids) {
        store.delete_run(id);
        std::printf("deleted run %lld\n", static_cast<long long>(id));
      }
      return 0;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mlsysbench: error: %s\n", e.what());
    return 2;
  }
  return 0;
}
