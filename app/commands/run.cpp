// `mlsysbench run`: a suite or one workload, planned, run on every rank and stored by rank 0.
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "app/catalog.hpp"
#include "app/commands/child.hpp"
#include "app/commands/commands.hpp"
#include "app/commands/common.hpp"
#include "backends/comm/communicator.hpp"
#include "backends/comm/mpi_env.hpp"
#include "backends/cuda/probe.hpp"
#include "harness/callgrind.hpp"
#include "harness/plan.hpp"
#include "harness/progress.hpp"
#include "harness/registry.hpp"
#include "harness/runner.hpp"
#include "harness/suite.hpp"
#include "harness/value.hpp"
#include "reports/nightly.hpp"
#include "reports/store.hpp"
#include "util/text.hpp"

namespace mlsb::cli {

namespace {

struct RunArgs {
  std::string target;
  std::vector<std::string> axis_specs, tags;
  std::optional<int> repetitions, warmup;
  std::optional<double> max_time, timeout, min_sample_time;
  uint64_t seed = 1;
  std::string backend = "cpu", comm_kind = "auto", filter, branch, confirms, measure, uuid;
  bool dry_run = false;
};

// What the run is told beyond its suite, as the store records it (reports::RunRecord::selection): a
// later run is judged only against references given the same runner options.
nlohmann::json selection_of(const RunArgs& args) {
  nlohmann::json params = nlohmann::json::object();
  for (const auto& spec : args.axis_specs) {
    const auto eq = spec.find('=');
    params[spec.substr(0, eq)].push_back(eq == std::string::npos ? "" : spec.substr(eq + 1));
  }
  const auto opt = [](const auto& o) { return o ? nlohmann::json(*o) : nlohmann::json(); };
  return {{"filter", args.filter},
          {"params", params},
          {"runner",
           {{"repetitions", opt(args.repetitions)}, {"warmup", opt(args.warmup)}, {"max_time_s", opt(args.max_time)},
            {"timeout_s", opt(args.timeout)}, {"min_sample_s", opt(args.min_sample_time)}}}};
}

// Why this run's counted cases cannot be counted ("" when they can): a GPU backend, MPI ranks, a time-based
// stopping rule.
std::string uncountable(const RunArgs& args) {
  if (args.backend == "cuda")
    return "--measure instructions counts CPU work: not with --backend cuda (GPU cases are timed on the device)";
  if (comm::resolve_comm_kind(args.comm_kind) != "local")
    return "--measure instructions counts one process: not under mpirun/srun or --comm mpi|nccl";
  if (args.max_time)
    return "--measure instructions takes a fixed sample count (--repetitions): a time-based stopping rule "
           "(--max-time) would make the count of samples depend on wall time";
  return "";
}

// Runs this binary with `mlsb_args` under valgrind's callgrind (harness/callgrind.hpp) and returns its exit
// code; Ctrl-C, SIGTERM and SIGHUP are forwarded to it. Its stdout and stderr go to `output` when given (else
// ours). Throws std::invalid_argument (exit 2) without valgrind.
int run_under_callgrind(const std::vector<std::string>& mlsb_args, const std::filesystem::path& output = {}) {
  const std::filesystem::path valgrind = find_valgrind();
  char tmpl[] = "/tmp/mlsb-callgrind-XXXXXX";
  if (!::mkdtemp(tmpl)) throw std::runtime_error(std::string("cannot create a folder for callgrind's dumps: ") + std::strerror(errno));
  const std::filesystem::path dir = tmpl;
  const auto cmd = callgrind_command(valgrind, std::filesystem::read_symlink("/proc/self/exe"), mlsb_args, dir);
  ::setenv(kCallgrindDirEnv, dir.c_str(), 1);
  int code = 0;
  std::string failed;
  try {
    code = run_child(cmd, {output});
  } catch (const std::exception& e) {
    failed = e.what();
  }
  ::unsetenv(kCallgrindDirEnv);
  std::string log;
  if (std::ifstream in(dir / "valgrind.log"); in) log.assign(std::istreambuf_iterator<char>(in), {});
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  if (!failed.empty()) throw std::runtime_error(failed);
  if (code > 128 && code != 130) {
    std::fprintf(stderr, "mlsysbench: the counted run ended by signal %d; valgrind's log:\n%s\n", code - 128, log.c_str());
    return 1;
  }
  if (code != 0 && code != 1 && code != 2 && code != 130) std::fprintf(stderr, "valgrind's log:\n%s\n", log.c_str());
  return code;
}

// `run --measure instructions` (or a suite that counts every case) outside callgrind: checks what cannot be
// counted (std::invalid_argument, exit 2), then runs this very command under callgrind.
int run_counted(const RunArgs& args, const Globals& globals) {
  if (const auto why = uncountable(args); !why.empty()) throw std::invalid_argument(why);
  std::fprintf(stderr, "counting instructions under callgrind (about 50 times slower than running natively)\n");
  return run_under_callgrind(globals.args);
}

// A counted case of a run that times its other cases: `run TARGET --filter <its id> --measure instructions`
// (the same -p and runner options) under callgrind into a store of its own, whose case replaces `rec` (the
// case's stub). A case that cannot be counted is skipped with the reason; one whose process stored nothing
// failed.
void count_in_own_process(const RunArgs& args, const CaseSpec& spec, reports::CaseRecord& rec) {
  if (const auto why = uncountable(args); !why.empty()) {
    rec.status = reports::CaseStatus::Skipped;
    rec.reason = why;
    return;
  }
  char tmpl[] = "/tmp/mlsb-counted-case-XXXXXX";
  if (!::mkdtemp(tmpl)) throw std::runtime_error(std::string("cannot create a folder for a counted case: ") + std::strerror(errno));
  const std::filesystem::path dir = tmpl, db = dir / "case.db";
  std::vector<std::string> argv = {"--db", db.string(), "run", args.target, "--measure", "instructions",
                                   "--filter", reports::exact_ids_filter({spec.id()}), "--seed",
                                   std::to_string(args.seed), "--backend", args.backend, "--comm", "local"};
  for (const auto& p : args.axis_specs) argv.insert(argv.end(), {"-p", p});
  if (args.repetitions) argv.insert(argv.end(), {"--repetitions", std::to_string(*args.repetitions)});
  if (args.warmup) argv.insert(argv.end(), {"--warmup", std::to_string(*args.warmup)});
  if (args.timeout) argv.insert(argv.end(), {"--timeout", std::to_string(*args.timeout)});
  int code = -1;
  std::optional<reports::CaseRecord> counted;
  try {
    code = run_under_callgrind(argv, dir / "output.log");
    reports::Store store(db, /*read_only=*/true);
    for (const auto& r : store.list_runs(1))
      for (auto& c : store.load_run(r.id).cases)
        if (c.workload == spec.workload && c.params_key == params_key(spec.params)) counted = std::move(c);
  } catch (const std::exception& e) {
    rec.reason = e.what();
  }
  std::string output;  // the counted process's own messages: the end of them says what went wrong
  if (std::ifstream in(dir / "output.log"); in) output.assign(std::istreambuf_iterator<char>(in), {});
  if (output.size() > 2000) output = "..." + output.substr(output.size() - 2000);
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  if (counted) {
    counted->id = 0;
    counted->run_id = 0;
    rec = std::move(*counted);
    return;
  }
  rec.status = reports::CaseStatus::Failed;
  rec.reason = "its counted process (valgrind --tool=callgrind) stored no result (exit " + std::to_string(code) + ")" +
               (rec.reason.empty() ? "" : ": " + rec.reason) + (output.empty() ? "" : "; its output: " + output);
}

// Runs `body` (given whether this is rank 0) on every rank and returns rank 0's exit code on all of
// them; an exception is reported and gives 2. When the ranks cannot agree (a rank is gone), each
// returns its own code.
int run_ranks(RunComms& comms, const std::function<int(bool root)>& body) {
  const bool root = comms.rank() == 0;
  int32_t code = 2;
  try {
    code = body(root);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mlsysbench: error: %s%s\n",
                 root ? "" : ("rank " + std::to_string(comms.rank()) + ": ").c_str(), e.what());
  }
  const bool several = comms.control->size() > 1;
  if (several && (interrupted || code == 130)) {
    // A signal: peers may be anywhere (in a case, in an agreement), so MPI_Finalize could wait forever.
    // Rank 0 has stored what it has; the others, told of the signal by rank 0's vote, give it up to
    // 30 s to do so. A signalled rank makes no more MPI calls (requests of its abandoned case may still
    // be in flight): rank 0 learns of it when the job ends. Then the job ends.
    if (!root && !interrupted) {
      try {
        comms.control->set_cancel_flag(nullptr);
        comms.control->set_timeout(30);
        comms.control->broadcast(&code, 1, comm::ElemType::I32, 0);
      } catch (const std::exception&) {
      }
    }
    std::fflush(stdout);
    std::fflush(stderr);
    comm::mpi_env::abort_job(130);
  }
  try {
    comms.control->set_timeout(120);
    comms.control->broadcast(&code, 1, comm::ElemType::I32, 0);
  } catch (const std::exception&) {
  }
  return code;
}

// Prints the cases of the plan and their stopping rules (--dry-run).
void print_plan(const Plan& plan, const std::string& backend) {
  const cuda::Probe gpu = cuda::probe();
  for (const auto& c : plan.cases) {
    const auto& r = c.runner;
    const auto seconds = [](double s) { return std::isfinite(s) ? shortest(s) + " s" : std::string("none"); };
    std::printf(
        "%s\n    %s\n    warmup %d, samples %d..%d, min time %g s, noise bound %g%%, "
        "time limit %s, timeout %s, a sample lasts %s%s\n",
        c.display_name().c_str(), c.id().c_str(), r.warmup, r.min_samples, r.max_samples, r.min_time_s,
        r.max_noise * 100, seconds(r.max_time_s).c_str(), seconds(r.timeout_s).c_str(),
        // Batching needs a warm-up call's time to size the batch (harness/runner/sampling.cpp's batch_calls).
        r.min_sample_s > 0 && r.warmup > 0 && comm::launcher_world_size() == 1
            ? ("at least " + shortest(r.min_sample_s) + " s (batched)").c_str()
            : "one call",
        c.measure == "instructions" ? ", instructions counted under callgrind" : "");
    std::string more;
    try {
      const auto workload = make_workload(c.workload);
      resolve_backend(backend, workload->info(), gpu);
      more = workload->describe(c.params);
    } catch (const SkipCase& e) {
      more = std::string("will be skipped: ") + e.what();
    } catch (const std::invalid_argument& e) {
      more = std::string("will be skipped: ") + e.what();
    }
    for (size_t at = 0; at < more.size();) {
      const size_t end = more.find('\n', at);
      std::printf("    %s\n", more.substr(at, end == std::string::npos ? std::string::npos : end - at).c_str());
      at = end == std::string::npos ? more.size() : end + 1;
    }
  }
  std::printf("%zu case(s)\n", plan.cases.size());
}

int run_run(const RunArgs& args, const Globals& globals) {
  RunnerOverrides ro;
  if (args.repetitions) ro.set_repetitions(*args.repetitions);
  ro.warmup = args.warmup;
  if (args.max_time) ro.max_time_s = args.max_time;
  ro.min_sample_s = args.min_sample_time;
  ro.timeout_s = args.timeout;
  const auto overrides = parse_axis_overrides(args.axis_specs);
  auto plan = build_plan(args.target, default_suite_dirs(), overrides, ro, args.filter);
  if (!args.measure.empty()) plan.set_measure(args.measure);
  if (!plan.cases.empty() && plan.counted() == plan.cases.size()) {  // a counted run: under callgrind
    if (!counting() && !args.dry_run) return run_counted(args, globals);
    if (!args.repetitions) {  // a fixed sample count: --repetitions, else 3 (counts repeat to the instruction)
      ro.set_repetitions(3);
      plan = build_plan(args.target, default_suite_dirs(), overrides, ro, args.filter);
      if (!args.measure.empty()) plan.set_measure(args.measure);
    }
  }
  if (plan.cases.empty()) throw std::invalid_argument("no case matches --filter '" + args.filter + "'");
  if (comm::launcher_rank() == 0)
    for (const auto& w : plan.warnings) std::fprintf(stderr, "mlsysbench: warning: %s\n", w.c_str());
  if (args.dry_run) {
    if (comm::launcher_rank() == 0) print_plan(plan, args.backend);  // under mpirun: once, not once per rank
    return 0;
  }
  RunComms comms = RunComms::create(args.comm_kind);
  catch_signals();
  return run_ranks(comms, [&](bool root) {
    // Rank 0 alone opens and writes the store; it tells the others whether that worked.
    std::optional<reports::Store> store;
    std::string store_error;
    try {
      if (root) store.emplace(globals.db);
    } catch (const std::exception& e) {
      store_error = e.what();
    }
    std::string confirms;  // the uuid of the run --confirms names
    if (root && store && !args.confirms.empty()) {
      if (const auto id = store->resolve_run(args.confirms)) confirms = store->load_run(*id).run.uuid;
      else store_error = "--confirms: no run named '" + args.confirms + "' in " + globals.db;
    }
    int32_t ok = store_error.empty() ? 1 : 0;
    comms.control->broadcast(&ok, 1, comm::ElemType::I32, 0);
    if (!ok) {
      if (root) std::fprintf(stderr, "mlsysbench: error: %s\n", store_error.c_str());
      return 2;
    }
    std::optional<Progress> progress;
    if (root) {
      std::vector<std::pair<std::string, std::string>> keys;
      for (const auto& c : plan.cases) keys.emplace_back(c.workload, params_key(c.params));
      const std::vector<double> last = store->last_case_seconds(keys);
      std::vector<PlannedCase> planned;
      for (size_t i = 0; i < plan.cases.size(); ++i)
        planned.push_back({plan.cases[i].workload, last[i], plan.cases[i].expected_s});
      progress.emplace(stderr, isatty(STDERR_FILENO), std::move(planned));
    }
    RunOptions opts;
    opts.seed = args.seed;
    opts.tags = args.tags;
    opts.argv = globals.command_line;
    opts.backend = args.backend;
    opts.comm = args.comm_kind;
    opts.branch = args.branch;
    opts.selection = selection_of(args);
    opts.confirms = confirms;
    if (plan.counted() && !counting())  // some cases counted, others timed: each counted one in its own process
      opts.count_case = [&args](const CaseSpec& spec, reports::CaseRecord& rec) { count_in_own_process(args, spec, rec); };
    opts.uuid = args.uuid;
    const auto out =
        run_plan(plan, opts, store ? &*store : nullptr, progress ? &*progress : nullptr, interrupted, comms);
    if (!root) return 0;  // rank 0's exit code is everyone's (or rank 0 ends the job, below)
    std::fprintf(stderr,
                 "run %lld (%s): %d ok, %d failed, %d timed out, %d skipped (run status %s); stored in %s\n"
                 "report: mlsysbench --db %s report %lld -o report.html\n",
                 static_cast<long long>(out.run_id), out.uuid.c_str(), out.ok, out.failed, out.timed_out, out.skipped,
                 reports::status_name(out.status).c_str(), globals.db.c_str(), globals.db.c_str(),
                 static_cast<long long>(out.run_id));
    if (out.status == reports::RunStatus::Interrupted) return 130;
    if (out.status == reports::RunStatus::Ok && out.ok == 0) {
      std::fprintf(stderr, "mlsysbench: every case was skipped (see the reasons above)\n");
      return 1;
    }
    if (out.broken && comms.control->size() > 1) {
      // A rank stopped answering (a stopped or hung process): the run is stored, and MPI_Finalize would
      // wait for that rank, so the job ends here.
      std::fprintf(stderr, "mlsysbench: a rank stopped answering; ending the job\n");
      std::fflush(stdout);
      std::fflush(stderr);
      comm::mpi_env::abort_job(1);
    }
    return out.status == reports::RunStatus::Ok ? 0 : 1;
  });
}

// `run WORKLOAD --help`: the workload's axes and metrics after run's options.
void print_workload_help(const RunArgs& args) {
  if (args.target.empty()) return;
  try {
    std::cout << "\n" << catalog_text(workload_catalog(catalog_json({}), args.target));
  } catch (const std::invalid_argument&) {  // a suite or a file: run's help alone
  }
}

}  // namespace

Command add_run_command(CLI::App& app) {
  auto args = std::make_shared<RunArgs>();
  auto* run = app.add_subcommand("run", "run a suite (name or .json file) or one workload");
  run->add_option("target", args->target, "suite name, suite file (*.json) or workload name")->required();
  run->add_option("-p,--param", args->axis_specs, "axis override, axis=v1,v2 (repeatable); e.g. -p agent=oracle");
  run->add_option("--repetitions", args->repetitions, "measured samples per case (fixes min and max samples)")
      ->check(CLI::Range(1, 1000000));
  run->add_option("--warmup", args->warmup, "untimed warm-up samples per case")->check(CLI::Range(0, 1000000));
  const CLI::Validator finite_positive(
      [](std::string& v) {
        const double d = std::strtod(v.c_str(), nullptr);
        return std::isfinite(d) && d > 0 ? std::string() : "must be a finite number > 0, got " + v;
      },
      "SECONDS");
  run->add_option("--max-time", args->max_time, "stop sampling a case after this many seconds")->check(finite_positive);
  run->add_option("--timeout", args->timeout, "fail a case still running after this many seconds")
      ->check(finite_positive);
  run->add_option("--min-sample-time", args->min_sample_time,
                  "a one-rank case whose warm-up call takes less repeats its body within each sample until the "
                  "sample lasts this long, recording the mean (default 0.01; 0 never batches)")
      ->check(CLI::Range(0.0, 3600.0));
  run->add_option("--seed", args->seed, "run seed; every case's data derives from it (default 1)");
  run->add_option("--tag", args->tags, "tag the run (repeatable); compare and report accept tags as run names")
      ->check(tag_name());
  run->add_option("--backend", args->backend,
                  "device backend: cpu | cuda | auto (cuda where the workload has a cuda path and a GPU is "
                  "present, else cpu); a case without the backend is skipped (default cpu)")
      ->check(CLI::IsMember({"cpu", "cuda", "auto"}));
  run->add_option("--comm", args->comm_kind,
                  "communicator: auto | local | mpi | nccl (auto = mpi when started by mpirun/srun, else "
                  "local); under MPI every rank runs each case and rank 0 alone writes the store")
      ->check(CLI::IsMember({"auto", "local", "mpi", "nccl"}));
  run->add_option("--filter", args->filter, "run only cases whose id (workload/axis=value,...) matches this regex");
  run->add_flag("--dry-run", args->dry_run, "print the cases and exit");
  run->add_option("--measure", args->measure,
                  "time (default) | instructions: count every measured sample's instructions under valgrind's "
                  "callgrind (deterministic; fixed caches and sample count; CPU cases of one process only), "
                  "as a suite's \"measure\" key does")
      ->check(CLI::IsMember({"time", "instructions"}));
  run->add_option("--confirms", args->confirms,
                  "this run re-runs cases of RUN to confirm a regression: it is stored as partial (never a "
                  "reference) and linked to RUN (the nightly's confirming re-run)");
  run->add_option("--uuid", args->uuid,
                  "store the run under this uuid (default a random one), so that the caller finds it again "
                  "(`mlsysbench nightly` does); a uuid already stored is an error")
      ->check(CLI::Validator(
          [](std::string& v) {
            return v.size() == 36 && v.find_first_not_of("0123456789abcdefABCDEF-") == std::string::npos
                       ? std::string()
                       : "a uuid is 36 characters of hex digits and dashes, got '" + v + "'";
          },
          "UUID"));
  run->add_option("--branch", args->branch,
                  "record the run under this branch (default: the git branch; under "
                  "GitHub Actions GITHUB_HEAD_REF or GITHUB_REF_NAME)");
  return {run, [args](const Globals& globals) { return run_run(*args, globals); },
          [args] { print_workload_help(*args); }};
}

}  // namespace mlsb::cli
