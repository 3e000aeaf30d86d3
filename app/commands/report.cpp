// `mlsysbench report`: one stored run rendered in one of the report formats (reports/render.hpp).
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>

#include "app/commands/commands.hpp"
#include "app/commands/common.hpp"
#include "reports/render.hpp"
#include "reports/run_listing.hpp"
#include "reports/store.hpp"

namespace mlsb::cli {

namespace {

struct ReportArgs {
  std::string run = "latest", format, output;
};

// Without -f: the format the output file's extension names (.html, .json, .md), else text on a terminal (the
// run and one line per case, as `db show`), else html.
std::string chosen_format(const ReportArgs& args) {
  if (!args.format.empty()) return args.format;
  const std::string ext = std::filesystem::path(args.output).extension().string();
  if (ext == ".json" || ext == ".md") return ext.substr(1);
  if (args.output.empty() && isatty(STDOUT_FILENO)) return "text";
  return "html";
}

int run_report(const ReportArgs& args, const Globals& globals) {
  const std::string format = chosen_format(args);
  if (format == "html" && args.output.empty() && isatty(STDOUT_FILENO))
    throw std::invalid_argument("an HTML report goes to a file: add -o report.html");
  reports::Store store(globals.db, /*read_only=*/true);
  const auto data = store.load_run(resolve(store, args.run));
  write_output(format == "text" ? reports::format_run_detail(data) : reports::render(data, reports::parse_format(format)),
               args.output);
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
                   "text | html | json | md | gbench | bmf | gab (lower-is-better metrics) | gab-bigger "
                   "(higher-is-better); default: the output file's extension, else text on a terminal, else html")
      ->check(CLI::IsMember({"text", "html", "json", "md", "gbench", "bmf", "gab", "gab-bigger"}));
  report->add_option("-o,--output", args->output, "output file (default: stdout)");
  return {report, [args](const Globals& globals) { return run_report(*args, globals); }, {}};
}

}  // namespace mlsb::cli
