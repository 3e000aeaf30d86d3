#pragma once
// The subcommands of `mlsysbench`, one file each in this folder: each registers its options on the CLI11
// app and returns what runs it; main() parses the command line and runs the one that was given.
#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

namespace mlsb::cli {

/// What every subcommand may read besides its own options, known once the command line is parsed.
struct Globals {
  std::string db;            ///< the results store: --db, $MLSB_DB or ./mlsysbench.db
  std::string command_line;  ///< the whole command line, as a run records it
  std::vector<std::string> args;  ///< argv[1..], as given (`run --measure instructions` re-executes them)
};

/// A registered subcommand: its node in the CLI11 app and what runs it.
struct Command {
  CLI::App* app = nullptr;                 ///< the subcommand; true (`*app`) when it was given
  std::function<int(const Globals&)> run;  ///< runs it and returns the exit code; may throw (exit 2)
  std::function<void()> after_help;        ///< optional: printed after this subcommand's --help
};

/// `list [WORKLOAD] [--json]`: the workloads (axes, defaults, metrics, units) and suites.
Command add_list_command(CLI::App& app);

/// `run TARGET`: a suite or one workload, on every rank, stored by rank 0.
Command add_run_command(CLI::App& app);

/// `report [RUN] -f FORMAT -o FILE`: a stored run rendered as html, json, md, gbench, bmf or gab.
Command add_report_command(CLI::App& app);

/// `compare [BASE] CANDIDATE`: two runs case by case, with the regression gate.
Command add_compare_command(CLI::App& app);

/// `history`: a metric's medians over the stored runs, with step detection.
Command add_history_command(CLI::App& app);

/// `nightly`: the nightly gate (runs, comparisons, confirming re-runs, history, summary.md).
Command add_nightly_command(CLI::App& app);

/// `import gbench|json FILE`: results produced elsewhere stored as a run.
Command add_import_command(CLI::App& app);

/// `mcp-serve [--http]`: the harness as MCP tools, over stdio or Streamable HTTP.
Command add_mcp_serve_command(CLI::App& app);

/// `env`: the environment a run would record, as JSON.
Command add_env_command(CLI::App& app);

/// `db ls|show|rm`: the results store inspected and pruned.
Command add_db_command(CLI::App& app);

}  // namespace mlsb::cli
