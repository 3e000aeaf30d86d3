// `mlsysbench compare`: two runs case by case (reports/compare.hpp), the baseline found or named, the
// environments checked, and the exit code of the regression gate.
#include "reports/compare.hpp"

#include <cstdio>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "app/commands/commands.hpp"
#include "app/commands/common.hpp"
#include "reports/baseline.hpp"
#include "reports/history.hpp"
#include "reports/store.hpp"

namespace mlsb::cli {

namespace {

struct CompareArgs {
  std::vector<std::string> refs;
  std::string baseline, format = "text", output;
  int history_runs = 0;
  bool strict_env = false, all = false, fail_on_regression = false, allow_suite_mismatch = false;
  reports::CompareOptions options;
};

// Where the reference's cases came from, when not all from the named baseline run, and the suspect runs.
void print_reference(const reports::Reference& ref) {
  std::set<int64_t> older;
  for (const auto& c : ref.base.cases)
    if (c.run_id != ref.base.run.id) older.insert(c.run_id);
  std::fprintf(stderr, "baseline: run %lld (%s), git %s; %zu clean run(s) of history\n",
               static_cast<long long>(ref.base.run.id), ref.base.run.uuid.c_str(),
               ref.base.run.git_sha.substr(0, 10).c_str(), ref.runs.size() - ref.suspect.size());
  if (!older.empty()) {
    std::string ids;
    for (const int64_t id : older) ids += (ids.empty() ? "" : ", ") + std::to_string(id);
    std::fprintf(stderr, "baseline: cases not ok in run %lld are judged against their newest ok case (runs %s)\n",
                 static_cast<long long>(ref.base.run.id), ids.c_str());
  }
  for (const auto& r : ref.suspect)
    std::fprintf(stderr, "baseline: run %lld is suspect (%s): its confirming re-run stands in for its re-run cases\n",
                 static_cast<long long>(r.id), r.suspect.c_str());
}

int run_compare(CompareArgs& args, const Globals& globals) {
  namespace rep = mlsb::reports;
  if (args.refs.size() == 2 && !args.baseline.empty())
    throw std::invalid_argument("compare: name the base either as the first run or with --baseline, not both");
  if (args.refs.size() == 1 && args.baseline.empty())
    throw std::invalid_argument("compare: name two runs (BASE CANDIDATE), or the candidate with --baseline auto");
  rep::Store store(globals.db, /*read_only=*/true);
  const auto cand = store.load_run(resolve(store, args.refs.back()));
  // With --history N the candidate is t-tested against the N newest clean comparable runs; without it,
  // the last 30 only measure the machine's run-to-run noise.
  args.options.history_t_test = args.history_runs > 0;
  args.options.history_limit = args.history_runs > 0 ? args.history_runs : 30;
  const auto ref = rep::find_reference(store, cand.run, args.options.history_limit);
  rep::RunData base;
  if (args.baseline == "auto") {
    if (!ref) {
      std::fprintf(stderr, "mlsysbench compare: %s\n", rep::no_baseline_note(store, cand.run).c_str());
      return 0;
    }
    print_reference(*ref);
    base = ref->base;
  } else {
    base = store.load_run(resolve(store, args.baseline.empty() ? args.refs.front() : args.baseline));
  }
  bool unfit = false;  // a comparison a gate must not pass: a run with itself, or runs of different suites
  if (base.run.id == cand.run.id) {
    std::fprintf(stderr, "mlsysbench compare: the base and the candidate are the same run (%lld): nothing is judged\n",
                 static_cast<long long>(cand.run.id));
    unfit = true;
  } else if (base.run.suite != cand.run.suite) {
    std::fprintf(stderr, "%s: the base is a run of suite '%s' and the candidate of suite '%s'%s\n",
                 args.allow_suite_mismatch ? "warning" : "mlsysbench compare", base.run.suite.c_str(),
                 cand.run.suite.c_str(), args.allow_suite_mismatch ? "" : " (--allow-suite-mismatch to compare them)");
    unfit = !args.allow_suite_mismatch;
  }
  const auto differences = rep::environment_differences(base.run, cand.run);
  if (!differences.empty()) {
    std::string list;
    for (const auto& d : differences) list += "\n  " + d;
    std::fprintf(stderr, "%s: the baseline's environment differs from the candidate's:%s\n",
                 args.strict_env ? "mlsysbench compare" : "warning", list.c_str());
    if (args.strict_env) return 3;
  }
  if (args.history_runs > 0)
    std::fprintf(stderr, "history: %zu comparable run(s) of the last %d asked for\n", ref ? ref->runs.size() : size_t{0},
                 args.history_runs);
  const auto cmp = rep::compare_runs(base, cand, args.options, ref ? ref->history : rep::HistoryMedians{});
  write_output(rep::render_comparison(cmp, args.format, args.all), args.output);
  const auto broken = cmp.new_failures();
  for (const auto& c : broken)
    std::fprintf(stderr, "regression: %s/%s was ok in the base and is %s in the candidate\n", c.workload.c_str(),
                 c.params_key.c_str(), rep::status_name(*c.cand_status).c_str());
  if (cmp.has_regression())
    std::fprintf(stderr, "regression: a primary metric got worse (threshold %.3g, alpha %.3g)\n",
                 args.options.threshold, args.options.alpha);
  for (const auto& c : cmp.lost_primary)
    std::fprintf(stderr, "regression: %s/%s has no samples of its primary metric in the candidate\n",
                 c.workload.c_str(), c.params_key.c_str());
  // Cases of the reference the candidate lacks: a complete run must hold them (a partial one need not).
  const auto missing = cmp.missing_in_candidate();
  for (const auto& c : missing)
    std::fprintf(stderr, "%s: %s is ok in the base and missing from the candidate%s\n",
                 cand.run.partial ? "note" : "regression", c.name.c_str(), cand.run.partial ? " (a partial run)" : "");
  const bool nothing = cmp.metrics.empty();
  if (nothing) std::fprintf(stderr, "mlsysbench: no case ok in both runs: nothing was compared\n");
  if (args.fail_on_regression && (unfit || cmp.fails_gate())) return 1;
  return 0;
}

}  // namespace

Command add_compare_command(CLI::App& app) {
  auto args = std::make_shared<CompareArgs>();
  auto* compare = app.add_subcommand("compare", "compare two runs case by case and flag regressions");
  compare
      ->add_option("runs", args->refs,
                   "BASE CANDIDATE, or only CANDIDATE with --baseline (id, uuid, tag, "
                   "TAG~N, latest, latest~N)")
      ->expected(1, 2)
      ->required();
  compare->add_option("--baseline", args->baseline,
                      "auto: per case, the newest clean run of the candidate's suite, machine key, branch and "
                      "runner options, of any commit (not partial, not suspect; none yet: exit 0 with a note); "
                      "or a run name");
  compare
      ->add_option("--history", args->history_runs,
                   "also t-test the candidate against the medians of the N newest clean comparable runs (same "
                   "suite, machine key, branch and runner options): worse only when both tests say so")
      ->check(CLI::Range(0, 100000));
  compare->add_flag("--strict-env", args->strict_env,
                    "exit 3 when the baseline's machine key, GPU driver, CUDA runtime, build type or flags differ");
  compare->add_option("--threshold", args->options.threshold, "relative change that counts (default 0.05 = 5%)")
      ->check(CLI::Number)
      ->check(CLI::Range(0.0, 10.0));
  compare->add_option("--alpha", args->options.alpha, "significance level of the Mann-Whitney U test (default 0.05)")
      ->check(CLI::Number)
      ->check(CLI::Range(0.0, 1.0));
  compare
      ->add_option("--run-noise", args->options.run_noise,
                   "run-to-run noise assumed without --history: a smaller change is noisy (default 0.25)")
      ->check(CLI::Number)
      ->check(CLI::Range(0.0, 10.0));
  compare->add_flag("--fail-on-regression", args->fail_on_regression,
                    "exit 1 when a primary metric got worse, a case ok in the base failed, timed out or is "
                    "missing from a complete candidate, no case could be compared, the runs are of different "
                    "suites or the same run");
  compare->add_flag("--allow-suite-mismatch", args->allow_suite_mismatch,
                    "compare runs of different suites without failing --fail-on-regression");
  compare->add_option("-f,--format", args->format, "text | json | md | html")
      ->check(CLI::IsMember({"text", "json", "md", "html"}));
  compare->add_flag("--all", args->all, "every row, not only the primary metrics that changed");
  compare->add_option("-o,--output", args->output, "output file (default: stdout)");
  return {compare, [args](const Globals& globals) { return run_compare(*args, globals); }, {}};
}

}  // namespace mlsb::cli
