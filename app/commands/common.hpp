#pragma once
// Helpers several subcommands share: the store's default path, run names, output files, tag names,
// the command line a run records, and signals turned into a flag.
#include <CLI/CLI.hpp>
#include <atomic>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "reports/store.hpp"

namespace mlsb::cli {

/// Set by SIGINT, SIGTERM or SIGHUP once catch_signals() installed the handler.
extern std::atomic<bool> interrupted;

/// From now on SIGINT, SIGTERM and SIGHUP set `interrupted` instead of ending the process.
void catch_signals();

/// The store when --db is not given: $MLSB_DB, else ./mlsysbench.db.
std::string default_db();

/// The id of the run `ref` names (id, uuid or prefix, tag, TAG~N, latest, latest~N); throws
/// std::invalid_argument naming the store when none matches.
int64_t resolve(reports::Store& store, const std::string& ref);

/// Writes `text` to the file `path`, or to stdout when `path` is empty or "-"; throws std::runtime_error
/// when the file cannot be written.
void write_output(const std::string& text, const std::string& path);

/// The environment a run would record (harness/environment.hpp), with its "machine_key" and "machine"
/// description: what `env` prints and the nightly keeps as env.json.
nlohmann::json environment_with_machine_key();

/// argv joined by spaces.
std::string join_argv(int argc, char** argv);

/// Checks that a --tag is a run name: not empty, and not readable as another kind of name (an id,
/// latest, NAME~N).
CLI::Validator tag_name();

}  // namespace mlsb::cli
