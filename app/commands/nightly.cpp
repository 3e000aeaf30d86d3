// `mlsysbench nightly`: the nightly job's runs, comparisons, confirming re-runs, history and summary
// (the decisions are reports/nightly.hpp); each run is a `mlsysbench run` child process, its output on
// stderr and in logs/, and every artifact is written to --out.
#include "reports/nightly.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "app/commands/child.hpp"
#include "app/commands/commands.hpp"
#include "app/commands/common.hpp"
#include "harness/plan.hpp"
#include "harness/suite.hpp"
#include "reports/compare.hpp"
#include "reports/night_pages.hpp"
#include "reports/render.hpp"
#include "reports/run_listing.hpp"
#include "reports/store.hpp"
#include "util/uuid.hpp"

namespace mlsb::cli {

namespace fs = std::filesystem;

namespace {

struct NightlyArgs {
  std::vector<std::string> suites, notes;
  std::string backend = "cuda", measure, out, filter, branch;
  int repetitions = 5, history = 30;
  bool strict_env = false;
};

// The runner the night uses: `mlsysbench run` of this very binary into the same store, found by its uuid.
reports::NightRunner child_runner(const NightlyArgs& args, const Globals& globals, reports::Store& store,
                                  const fs::path& logs) {
  return [&args, &globals, &store, logs](const reports::NightRunRequest& req) {
    reports::NightRunOutcome out;
    RunnerOverrides ro;
    ro.set_repetitions(args.repetitions);
    if (build_plan(req.suite, default_suite_dirs(), {}, ro, req.filter).cases.empty()) {
      out.no_case = true;
      return out;
    }
    const std::string uuid = random_uuid();
    std::vector<std::string> argv = {fs::read_symlink("/proc/self/exe").string(), "--db", globals.db, "run",
                                     req.suite, "--backend", args.backend, "--repetitions",
                                     std::to_string(args.repetitions), "--tag", req.tag, "--uuid", uuid};
    if (!args.measure.empty()) argv.insert(argv.end(), {"--measure", args.measure});
    if (!args.branch.empty()) argv.insert(argv.end(), {"--branch", args.branch});
    if (!req.filter.empty()) argv.insert(argv.end(), {"--filter", req.filter});
    if (!req.confirms.empty()) argv.insert(argv.end(), {"--confirms", req.confirms});
    const std::string kind = req.confirms.empty() ? "run" : "confirm";
    std::fprintf(stderr, "== %s %s\n", kind == "run" ? "run" : "confirming re-run of", req.suite.c_str());
    out.exit_code = run_child(argv, {logs / (reports::night_file_stem(kind, req.suite) + ".log"), true, true});
    out.run_id = store.run_id_by_uuid(uuid);
    if (out.exit_code == 2 && !out.run_id) out.error = "mlsysbench run exited 2 (see logs/" + kind + "-*.log)";
    if (interrupted) out.exit_code = 130;
    return out;
  };
}

// Writes `text` to out/name, or says on stderr why it could not (the night goes on).
bool write_artifact(const fs::path& out, const std::string& name, const std::string& text) {
  try {
    write_output(text, (out / name).string());
    return true;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mlsysbench nightly: %s\n", e.what());
    return false;
  }
}

// Every file the night leaves for one suite: the runs' reports, the comparisons, the history.
void write_suite_artifacts(const fs::path& out, const reports::SuiteNight& s) {
  namespace rep = mlsb::reports;
  const auto report = [&](const std::string& kind, const rep::RunData& run) {
    for (const auto f : {rep::Format::Html, rep::Format::Json, rep::Format::Md})
      write_artifact(out, rep::night_file_stem(kind, s.suite) + "." + std::string(rep::to_string(f)),
                     rep::render(run, f));
  };
  const auto compared = [&](const std::string& kind, const rep::Comparison& cmp) {
    for (const char* f : {"json", "md", "html"})
      write_artifact(out, rep::night_file_stem(kind, s.suite) + "." + f, rep::render_comparison(cmp, f));
  };
  if (s.run) report("report", *s.run);
  if (s.rerun) report("confirm", *s.rerun);
  if (s.comparison) compared("compare", *s.comparison);
  if (s.rerun_comparison) compared("compare-confirm", *s.rerun_comparison);
  if (s.history)
    for (const char* f : {"json", "html"})
      write_artifact(out, rep::night_file_stem("history", s.suite) + "." + f, rep::render_history(*s.history, f));
}

// Removes what an earlier night left in `out`, which would be mistaken for tonight's.
void clear_earlier_night(const fs::path& out) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(out, ec)) {
    const std::string name = entry.path().filename().string();
    const bool artifact = name.starts_with("report-") || name.starts_with("compare-") ||
                          name.starts_with("confirm-") || name.starts_with("history-");
    if (artifact || name == "summary.md" || name == "index.html" || name == "env.json" || name == "store.db") fs::remove(entry.path(), ec);
  }
  for (const auto& entry : fs::directory_iterator(out / "logs", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.starts_with("run-") || name.starts_with("confirm-")) fs::remove(entry.path(), ec);
  }
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

int run_nightly_command(NightlyArgs& args, const Globals& globals) {
  namespace rep = mlsb::reports;
  if (args.suites.empty())
    args.suites = args.backend == "cuda" ? std::vector<std::string>{"compress-gpu", "moe-train-gpu", "moe-offload-gpu"}
                                         : std::vector<std::string>{"smoke"};
  if (args.measure == "instructions" && args.backend == "cuda")
    throw std::invalid_argument("--measure instructions counts CPU work: use it with --backend cpu (GPU suites are "
                                "timed on the device)");
  const fs::path out = args.out.empty() ? fs::path(std::getenv("OUT") ? std::getenv("OUT") : "nightly-out") : fs::path(args.out);
  std::error_code ec;
  if (fs::exists(out, ec) && !fs::is_directory(out, ec))
    throw std::invalid_argument("the output folder '" + out.string() + "' is a file (--out, or $OUT)");
  fs::create_directories(out / "logs", ec);
  if (ec || ::access(out.c_str(), W_OK) != 0)
    throw std::invalid_argument("the output folder '" + out.string() + "' is not writable (--out, or $OUT)");
  clear_earlier_night(out);  // also when the night is refused below: an old summary would mislead
  // Before anything runs: unknown suites, a suite given twice, a bad --filter or one no case matches (exit 2).
  size_t cases = 0;
  for (size_t i = 0; i < args.suites.size(); ++i) {
    for (size_t j = 0; j < i; ++j)
      if (args.suites[j] == args.suites[i]) throw std::invalid_argument("--suite " + args.suites[i] + " is given twice");
    cases += build_plan(args.suites[i], default_suite_dirs(), {}, {}, args.filter).cases.size();
  }
  if (cases == 0) throw std::invalid_argument("no case of the suites matches --filter '" + args.filter + "'");
  const nlohmann::json env = environment_with_machine_key();
  write_artifact(out, "env.json", env.dump(2) + "\n");

  rep::Store store(globals.db);
  catch_signals();
  rep::NightlyOptions options;
  options.suites = args.suites;
  options.filter = args.filter;
  options.history = args.history;
  options.strict_env = args.strict_env;
  const auto night = rep::run_nightly(store, options, child_runner(args, globals, store, out / "logs"));
  for (const auto& s : night.suites) {
    write_suite_artifacts(out, s);
    std::fprintf(stderr, "== %s: %s; %s%s%s\n", s.name.c_str(), s.cases.c_str(),
                 s.against_baseline.empty() ? "not compared" : s.against_baseline.c_str(),
                 s.rerun_verdict.empty() ? "" : ("; re-run: " + s.rerun_verdict).c_str(),
                 s.history_verdict.empty() ? "" : ("; history: " + s.history_verdict).c_str());
  }

  std::string sha = "?", branch = args.branch.empty() ? "?" : args.branch;
  for (const auto& s : night.suites)
    if (s.run) {
      if (!s.run->run.git_sha.empty()) sha = reports::git_label(s.run->run);
      if (!s.run->run.branch.empty()) branch = s.run->run.branch;
    }
  std::string suites;
  for (const auto& s : args.suites) suites += (suites.empty() ? "" : " ") + s;
  const std::string context = utc_now() + " · commit `" + sha + "` · branch `" + branch +
                              "` · machine key `" +
                              env.value("machine_key", "?") + "` · backend " + args.backend + " · measure " +
                              (args.measure.empty() ? "(the suites')" : args.measure) + " · suites " + suites + " · " +
                              std::to_string(args.repetitions) + " repetitions · history " +
                              std::to_string(args.history) + (args.filter.empty() ? "" : " · filter `" + args.filter + "`");
  // index.html first: the page a person opens; summary.md says the same for a job summary or a comment.
  write_artifact(out, "index.html", rep::render_night_index(night, context, args.notes));
  const std::string summary = rep::render_night_summary(night, context, args.notes);
  write_artifact(out, "summary.md", summary);
  try {
    store.copy_to(out / "store.db");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mlsysbench nightly: %s\n", e.what());
  }
  std::fputs(summary.c_str(), stdout);
  return night.status;
}

}  // namespace

Command add_nightly_command(CLI::App& app) {
  auto args = std::make_shared<NightlyArgs>();
  auto* nightly = app.add_subcommand(
      "nightly",
      "the nightly gate: run suites into the store (--db), compare each run with its clean reference, "
      "re-run the cases that got worse to confirm a regression (a night the re-run does not confirm is "
      "marked suspect), detect steps over the history, and write reports and summary.md to --out. Exit "
      "status: 0 pass (also \"no baseline yet\"), 1 confirmed regression, 2 usage error, 3 unfit "
      "environment (every case skipped, or --strict-env and another environment), 4 a failed case, 130 "
      "interrupted. The store is --db (default $MLSB_DB, else ./mlsysbench.db; scripts/nightly passes "
      "$MLSB_NIGHTLY_DB)");
  nightly->add_option("--suite", args->suites,
                      "suite to run; repeatable (default: compress-gpu, moe-train-gpu and moe-offload-gpu "
                      "for cuda, smoke for cpu)");
  nightly->add_option("--backend", args->backend, "device backend: cpu | cuda (default cuda)")
      ->check(CLI::IsMember({"cpu", "cuda"}));
  nightly->add_option("--measure", args->measure,
                      "time | instructions (counted under callgrind; --backend cpu); default: each suite's own")
      ->check(CLI::IsMember({"time", "instructions"}));
  nightly->add_option("--repetitions", args->repetitions, "samples per case (default 5)")
      ->check(CLI::Range(1, 1000000));
  nightly->add_option("--history", args->history,
                      "runs of history the comparison and the step detection read (default 30)")
      ->check(CLI::Range(1, 100000));
  nightly->add_option("--out", args->out, "folder for the reports, logs and summary.md (default $OUT, else ./nightly-out)");
  nightly->add_option("--filter", args->filter,
                      "run only the cases whose id (workload/axis=value,...) matches this regex (the runs are "
                      "partial: never a later night's baseline)");
  nightly->add_option("--branch", args->branch, "the branch the runs are recorded under and judged within");
  nightly->add_flag("--strict-env", args->strict_env, "exit 3 when the baseline's environment differs from the run's");
  nightly->add_option("--note", args->notes, "a line for the summary's notes (repeatable; scripts/nightly's warnings)");
  return {nightly, [args](const Globals& globals) { return run_nightly_command(*args, globals); }, {}};
}

}  // namespace mlsb::cli
