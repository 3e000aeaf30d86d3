// `mlsysbench report`: one stored run rendered in one of the report formats (reports/render.hpp).
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>

#include "app/commands/commands.hpp"
#include "app/commands/common.hpp"
#include "reports/render.hpp"
#include "reports/store.hpp"

namespace mlsb::cli {

namespace {

struct ReportArgs {
  std::string run = "latest", format = "html", output;
};

int run_report(const ReportArgs& args, const Globals& globals) {
  if (args.format == "html" && args.output.empty() && isatty(STDOUT_FILENO))
    throw std::invalid_argument("an HTML report goes to a file: add -o report.html");
  reports::Store store(globals.db, /*read_only=*/true);
  const auto data = store.load_run(resolve(store, args.run));
  write_output(reports::render(data, reports::parse_format(args.format)), args.output);
  if (!args.output.empty() && args.output != "-") std::fprintf(stderr, "wrote %s\n", args.output.c_str());
  return 0;
}

}  // namespace

Command add_report_command(CLI::App& app) {
  auto args = std::make_shared<ReportArgs>();
  auto* report = app.add_subcommand("report",
                                    "render a stored run as html, json, md, gbench, or for CI dashboards "
                                    "as bmf (Bencher) or gab / gab-bigger (github-action-benchmark)");
  report->add_option("run", args->run, "run id, uuid, tag or latest (default latest)");
  report
      ->add_option("-f,--format", args->format,
                   "html | json | md | gbench | bmf | gab (lower-is-better metrics) | gab-bigger (higher-is-better)")
      ->check(CLI::IsMember({"html", "json", "md", "gbench", "bmf", "gab", "gab-bigger"}));
  report->add_option("-o,--output", args->output, "output file (default: stdout)");
  return {report, [args](const Globals& globals) { return run_report(*args, globals); }, {}};
}

}  // namespace mlsb::cli
