#pragma once
// A command's child process (mlsysbench itself, or valgrind running it): started, its output kept as asked,
// this process's interrupts passed on to it, waited for.
#include <filesystem>
#include <string>
#include <vector>

namespace mlsb::cli {

/// Where a child's stdout and stderr go.
struct ChildOutput {
  std::filesystem::path file;  ///< empty: to ours (inherited)
  bool append = false;         ///< append to `file` after a "$ command line" header, instead of truncating it
  bool tee = false;            ///< copy what goes to `file` to our stderr too
};

/// Starts argv[0] (a path) with argv and this process's environment and waits for it. While it runs,
/// SIGINT, SIGTERM and SIGHUP sent to this process set `interrupted` (common.hpp) and are passed on to the
/// child; the handlers before are restored after. Returns its exit code, or 128 + N when signal N ended it.
/// Throws std::runtime_error naming argv[0] when it cannot start (or `file` cannot be opened).
int run_child(const std::vector<std::string>& argv, const ChildOutput& output = {});

}  // namespace mlsb::cli
