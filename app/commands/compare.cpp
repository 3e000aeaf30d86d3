// `mlsysbench compare`: two runs case by case (reports/compare.hpp), the baseline found or named, the
// environments checked, and the exit code of the regression gate.
#include "reports/compare.hpp"

#include <cstdio>
#include <memory>
#include <optional>
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
  bool strict_env = false, all = false, fail_on_regression = false;
  reports::CompareOptions options;
};

int run_compare(CompareArgs& args, const Globals& globals) {
  namespace rep = mlsb::reports;
  if (args.refs.size() == 2 && !args.baseline.empty())
    throw std::invalid_argument("compare: name the base either as the first run or with --baseline, not both");
  if (args.refs.size() == 1 && args.baseline.empty())
    throw std::invalid_argument("compare: name two runs (BASE CANDIDATE), or the candidate with --baseline auto");
  rep::Store store(globals.db, /*read_only=*/true);
  const auto cand = store.load_run(resolve(store, args.refs.back()));
  std::optional<rep::RunRecord> base_run;
  if (args.baseline == "auto") {
    base_run = rep::find_baseline(store, cand.run);
    if (!base_run) {
      std::fprintf(stderr, "mlsysbench compare: %s\n", rep::no_baseline_note(store, cand.run).c_str());
      return 0;
    }
    std::fprintf(stderr, "baseline: run %lld (%s), git %s\n", static_cast<long long>(base_run->id),
                 base_run->uuid.c_str(), base_run->git_sha.substr(0, 10).c_str());
  }
  const auto base = store.load_run(
      base_run ? base_run->id : resolve(store, args.baseline.empty() ? args.refs.front() : args.baseline));
  const auto differences = rep::environment_differences(base.run, cand.run);
  if (!differences.empty()) {
    std::string list;
    for (const auto& d : differences) list += "\n  " + d;
    std::fprintf(stderr, "%s: the baseline's environment differs from the candidate's:%s\n",
                 args.strict_env ? "mlsysbench compare" : "warning", list.c_str());
    if (args.strict_env) return 3;
  }
  // With --history N the candidate is t-tested against the N newest comparable runs; without it,
  // the last 30 only measure the machine's run-to-run noise.
  args.options.history_t_test = args.history_runs > 0;
  const auto runs = rep::comparable_runs(store, cand.run, args.history_runs > 0 ? args.history_runs : 30);
  const rep::HistoryMedians medians = rep::history_medians(store, runs);
  if (args.history_runs > 0)
    std::fprintf(stderr, "history: %zu comparable run(s) of the last %d asked for\n", runs.size(), args.history_runs);
  const auto cmp = rep::compare_runs(base, cand, args.options, medians);
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
  const bool nothing = cmp.metrics.empty();
  if (nothing) std::fprintf(stderr, "mlsysbench: no case ok in both runs: nothing was compared\n");
  if (args.fail_on_regression && (cmp.has_regression() || !broken.empty() || !cmp.lost_primary.empty() || nothing))
    return 1;
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
                      "auto: the newest ok run of the candidate's suite, machine key and branch with another git "
                      "sha (none yet: exit 0 with a note); or a run name");
  compare
      ->add_option("--history", args->history_runs,
                   "also t-test the candidate against the medians of the N newest comparable runs (same suite, "
                   "machine key and branch, another git sha): worse only when both tests say so")
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
                    "exit 1 when a primary metric got worse, a case ok in the base failed or timed out, "
                    "or no case could be compared");
  compare->add_option("-f,--format", args->format, "text | json | md | html")
      ->check(CLI::IsMember({"text", "json", "md", "html"}));
  compare->add_flag("--all", args->all, "md and html: every row, not only the primary metrics that changed");
  compare->add_option("-o,--output", args->output, "output file (default: stdout)");
  return {compare, [args](const Globals& globals) { return run_compare(*args, globals); }, {}};
}

}  // namespace mlsb::cli
