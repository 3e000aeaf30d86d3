#pragma once
// Environment capture stored with every run, so numbers can be traced to the machine and build.
#include <string>

#include <nlohmann/json.hpp>

namespace mlsb {

struct GitInfo {
  std::string sha;  ///< HEAD of the project checkout, "" when unknown
  bool dirty = false;
  std::string branch;  ///< the checked-out branch; under GitHub Actions GITHUB_HEAD_REF (a pull request's
                       ///< branch) or GITHUB_REF_NAME; "" when detached or unknown
};

/// The project's git HEAD (or $MLSB_GIT_SHA when set: a build from a source archive, or runs labelled by
/// the commit under test), whether the work tree has changes, and its branch (runs `git` on the source dir).
GitInfo project_git_info();

/// CI metadata from the environment, only the variables that are set: {"run_id": GITHUB_RUN_ID,
/// "run_attempt", "runner": RUNNER_NAME, "ref": GITHUB_REF, "sha": GITHUB_SHA, "workflow", "repository"};
/// {} outside CI.
nlohmann::json ci_metadata();

/// Host, CPU model, cores, memory (bytes), the CPU's state (cpu_mhz now, cpu_max_mhz, cpu_governor,
/// cpu_turbo, cpu_affinity: CPUs this process may use, caches [{level, type, size, shared_cpus}],
/// load_average [1, 5, 15 min]), OS and kernel, compiler, flags and build type, library versions (SQLite,
/// curl, nlohmann/json, Open MPI when installed, CUDA runtime/driver, NCCL), GPUs (name, memory bytes)
/// when present, and the thread and device variables set (env_vars: OMP_*, OPENBLAS_*, MKL_NUM_THREADS,
/// CUDA_VISIBLE_DEVICES, NCCL_ALGO/PROTO). Never throws; unknown fields are omitted.
nlohmann::json capture_environment();

}  // namespace mlsb
