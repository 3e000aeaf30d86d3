#pragma once
// Helpers shared by the tests: paths to the build, the shared fixtures and the npm servers; temp dirs;
// running a command and capturing its output.
#include <filesystem>
#include <string>

#include "reports/model.hpp"

namespace mlsb::test {

/// The mlsysbench binary under test.
std::filesystem::path binary();
/// The project's source root.
std::filesystem::path source_dir();
/// ../shared beside the checkout (MLSB_SHARED_DIR overrides); tests needing it skip when absent.
std::filesystem::path shared_dir();
/// mcp/servers/node_modules/.bin (where scripts/setup-deps installs the npm MCP servers).
std::filesystem::path npm_bin_dir();

/// A fresh empty directory removed (recursively) at destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

struct CommandResult {
  int exit_code = -1;  ///< exit status, or 128+signal when killed by a signal
  std::string out;     ///< stdout
  std::string err;     ///< stderr
};
/// Runs `command` through /bin/sh with stdout and stderr captured separately.
CommandResult run_shell(const std::string& command);
/// `p` in single quotes, for a shell command line.
std::string shell_quote(const std::filesystem::path& p);
/// Runs `mlsysbench ARGS` (ARGS already shell-quoted where needed).
CommandResult run_cli(const std::string& args);
/// Runs `mlsysbench --db DB ARGS`.
CommandResult run_cli(const std::filesystem::path& db, const std::string& args);

/// A program of tests/mpi (built beside the test binaries).
std::filesystem::path mpi_program(const std::string& name);
/// "mpirun -n RANKS --oversubscribe " with the settings a root user on 2 cores needs, ended after `limit_s`
/// (exit status 124): the program and its arguments follow.
std::string mpirun(int ranks, int limit_s = 90);
/// Runs `mlsysbench --db DB ARGS` on `ranks` Open MPI ranks (mpirun, ended after 600 s).
CommandResult run_cli_on_ranks(int ranks, const std::filesystem::path& db, const std::string& args);
/// A command's result and how long it ran.
struct Timed {
  CommandResult r;
  double seconds = 0;
};
Timed run_timed(const std::string& command);
/// Occurrences of `what` in `text`, not overlapping.
int count(const std::string& text, const std::string& what);
/// `text` with each wrapped line joined to the one before: a newline and the indent that follows it become
/// one space (the terminal output of compare wraps at 100 columns; a phrase is searched in one piece).
std::string unwrapped(const std::string& text);

/// Writes `text` to `path` (creating parent folders).
void write_file(const std::filesystem::path& path, const std::string& text);
/// Reads a whole file; throws std::runtime_error when it cannot.
std::string read_file(const std::filesystem::path& path);

/// The run of a store that holds exactly one (a failed expectation otherwise); throws std::out_of_range when
/// it holds none.
reports::RunData only_run(const std::filesystem::path& db);

}  // namespace mlsb::test
