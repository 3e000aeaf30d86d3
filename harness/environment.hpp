#pragma once
// Environment capture stored with every run, so numbers can be traced to the machine and build.
#include <string>

#include <nlohmann/json.hpp>

namespace mlsb {

struct GitInfo {
  std::string sha;  ///< HEAD of the project checkout, "" when unknown
  bool dirty = false;
};

/// The project's git HEAD and whether the work tree has changes (runs `git` on the source dir).
GitInfo project_git_info();

/// Host, CPU model, cores, memory (bytes), OS and kernel, compiler, flags and build type, library
/// versions (SQLite, curl, nlohmann/json, Open MPI when installed, CUDA runtime/driver, NCCL) and GPUs
/// (name, memory bytes) when present. Never throws; unknown fields are omitted.
nlohmann::json capture_environment();

}  // namespace mlsb
