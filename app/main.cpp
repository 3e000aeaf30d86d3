// mlsysbench: the command-line driver. It registers the subcommands (app/commands/), parses the command line
// and runs the subcommand given; what they compute is library code (harness/, reports/).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "app/commands/commands.hpp"
#include "app/commands/common.hpp"
#include "harness/alias.hpp"
#include "reports/store.hpp"
#include "util/text.hpp"

namespace {

// Reports a command line CLI11 could not parse and returns the exit code: a mistyped command or option
// is named with the nearest one; help and version print (exit 0); every other usage error exits 2.
int usage_error(const CLI::App& app, const std::vector<mlsb::cli::Command>& commands, const CLI::ParseError& e,
                int argc, char** argv) {
  // A mistyped command reads better named than as "a subcommand is required".
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--db") ++i;
    if (arg.empty() || arg[0] == '-') continue;
    if (std::any_of(commands.begin(), commands.end(), [&](const auto& c) { return c.app->get_name() == arg; })) break;
    std::string names;
    for (const auto& c : commands) names += (names.empty() ? "" : ", ") + c.app->get_name();
    std::fprintf(stderr, "mlsysbench: error: unknown command '%s' (commands: %s)\n", arg.c_str(), names.c_str());
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
    for (const CLI::App* a : {cmd, &app})
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
  if (e.get_exit_code() != 0) {  // in the style of every other error, not CLI11's own
    const CLI::App* cmd = nullptr;
    for (const auto& c : commands)
      if (*c.app) cmd = c.app;
    std::fprintf(stderr, "mlsysbench: error: %s (see mlsysbench%s --help)\n", e.what(),
                 cmd ? (" " + cmd->get_name()).c_str() : "");
    return 2;  // every usage error is bad input: exit 2, as for other bad input
  }
  app.exit(e);  // help or version
  if (dynamic_cast<const CLI::CallForHelp*>(&e))
    for (const auto& c : commands)
      if (*c.app && c.after_help) c.after_help();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  namespace cli = mlsb::cli;
  // Runs stored by earlier builds (before a workload became a family of benchmarks, or a benchmark gained
  // an axis) read back under the names this build gives their cases.
  mlsb::reports::set_case_renamer(mlsb::rename_stored_case);
  CLI::App app{
      "mlsysbench: benchmarks and agent-tool evaluation for large-model systems.\n"
      "Results go to an SQLite store (--db, $MLSB_DB, default ./mlsysbench.db)."};
  app.require_subcommand(1);
  app.fallthrough();  // global options (--db) may also follow the subcommand: `run X --db r.db`
  app.set_version_flag("--version", MLSB_VERSION);
  std::string db = cli::default_db();
  app.add_option("--db", db, "results store (SQLite file); default $MLSB_DB or ./mlsysbench.db")
      ->check(CLI::Validator([](std::string& v) { return v.empty() ? "--db needs a file name" : ""; }, "FILE"));
  // In this order in --help and in the unknown-command message.
  const std::vector<cli::Command> commands = {
      cli::add_list_command(app),      cli::add_run_command(app),     cli::add_report_command(app),
      cli::add_compare_command(app),   cli::add_history_command(app), cli::add_nightly_command(app), cli::add_import_command(app),
      cli::add_mcp_serve_command(app), cli::add_env_command(app),     cli::add_db_command(app)};

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return usage_error(app, commands, e, argc, argv);
  }
  try {
    const cli::Globals globals{db, cli::join_argv(argc, argv), std::vector<std::string>(argv + 1, argv + argc)};
    for (const auto& c : commands)
      if (*c.app) return c.run(globals);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mlsysbench: error: %s\n", e.what());
    return 2;
  }
  return 0;
}
