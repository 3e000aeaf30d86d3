#pragma once
// Per-trial fixture copies: every task trial gets a fresh, writable copy of the fixture tree (write
// tasks change files), with declared placeholder files created where the tree lacks them.
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

namespace mlsb::toolbench {

/// The fixture cannot be used (missing, bad placeholder file). The message names the path.
struct FixtureError : std::runtime_error { using std::runtime_error::runtime_error; };

/// Where a fixture tree comes from. With `subdirs_only` only the folders under `dir` are copied
/// (used when the fixture is the task file's own folder, so the task files beside it stay out).
struct FixtureSource {
  std::filesystem::path dir;
  bool subdirs_only = false;
};

/// Resolves the `fixture` axis: "auto" is `<dataset dir>/fixture` when that is a folder, else the
/// dataset's folder itself (subdirs_only); any other value is a folder path. Throws FixtureError
/// when the folder does not exist or is not a folder.
FixtureSource resolve_fixture(const std::string& value, const std::filesystem::path& dataset);

/// A file to create in a copy when missing. `path` is relative to the copy's root; a nested path
/// applies only when the copy holds a folder named like its first component (so one list serves
/// several fixtures); a bare file name always applies.
struct Placeholder {
  std::filesystem::path path;
  std::string content;
};

/// Reads `{"placeholders": [{"path": "...", "content": "..."}]}` from a regular file (read as
/// read_json_file does). Paths must be relative and must not contain "..". Throws FixtureError naming
/// the file and entry.
std::vector<Placeholder> load_placeholders(const std::filesystem::path& file);

/// Copies `source` into `dest` (created; must not exist), makes the copy owner-writable, then creates
/// the applicable missing placeholders. Returns the placeholders created. Throws FixtureError.
std::vector<std::filesystem::path> make_trial_copy(const FixtureSource& source, const std::filesystem::path& dest,
                                                   const std::vector<Placeholder>& placeholders);

}  // namespace mlsb::toolbench
