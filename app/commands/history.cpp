// `mlsysbench history`: a metric's medians over stored runs (reports/history.hpp), with step detection and
// the exit code of the regression gate.
#include "reports/history.hpp"

#include <unistd.h>

#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>

#include "app/commands/commands.hpp"
#include "app/commands/common.hpp"
#include "reports/store.hpp"

namespace mlsb::cli {

namespace {

struct HistoryArgs {
  reports::HistoryQuery query;
  reports::StepOptions steps;
  std::string format = "text", output;
  bool detect = false, fail_on_regression = false;
};

int run_history(const HistoryArgs& args, const Globals& globals) {
  if (args.format == "html" && args.output.empty() && isatty(STDOUT_FILENO))
    throw std::invalid_argument("an HTML history goes to a file: add -o history.html");
  reports::Store store(globals.db, /*read_only=*/true);
  auto h = reports::load_history(store, args.query);
  if (args.detect || args.fail_on_regression) reports::detect_history(h, args.steps);
  write_output(reports::render_history(h, args.format), args.output);
  if (!args.output.empty() && args.output != "-") std::fprintf(stderr, "wrote %s\n", args.output.c_str());
  const auto regressions = reports::standing_regressions(h);
  for (const auto& r : regressions) std::fprintf(stderr, "regression: %s\n", reports::describe(r).c_str());
  return args.fail_on_regression && !regressions.empty() ? 1 : 0;
}

}  // namespace

Command add_history_command(CLI::App& app) {
  auto args = std::make_shared<HistoryArgs>();
  auto& hq = args->query;
  auto* history = app.add_subcommand("history",
                                     "a metric's medians over the stored runs of one suite, machine "
                                     "and branch, with step (change-point) detection");
  history->add_option("--suite", hq.suite, "the suite (or workload of a plain run); required when several match");
  history->add_option("--tag", hq.tag, "only runs carrying this tag");
  history->add_option("--filter", hq.filter, "only cases whose id (workload/axis=value,...) matches this regex");
  history->add_option("--metric", hq.metric, "primary (default: each case's primary metric), all, or a metric name");
  history->add_option("--machine", hq.machine,
                      "auto (the newest matching run's machine key) or a key (mlsysbench env)");
  history->add_option("--branch", hq.branch, "auto (the newest matching run's branch) or a branch");
  history->add_option("--last", hq.last, "only the newest N runs (default all)")->check(CLI::Range(0, 1000000));
  history->add_flag("--detect", args->detect, "find steps (change points) and the regressions still standing");
  history
      ->add_option("--threshold", args->steps.threshold, "relative step below which it is no regression (default 0.05)")
      ->check(CLI::Number)
      ->check(CLI::Range(0.0, 10.0));
  history->add_flag("--fail-on-regression", args->fail_on_regression,
                    "(implies --detect) exit 1 when a primary metric has a regression still standing");
  history->add_option("-f,--format", args->format, "text | json | md | html")
      ->check(CLI::IsMember({"text", "json", "md", "html"}));
  history->add_option("-o,--output", args->output, "output file (default: stdout)");
  return {history, [args](const Globals& globals) { return run_history(*args, globals); }, {}};
}

}  // namespace mlsb::cli
