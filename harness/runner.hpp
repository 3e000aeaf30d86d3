#pragma once
// The runner: executes a plan case by case (warm-up, samples until the stopping rule holds, verify),
// isolates failures and timeouts, and commits each case to the store when it ends. runner.cpp is the
// plan loop; runner/ holds one case's sampling, its watchdog and the ranks' vote on its status.
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "backends/comm/communicator.hpp"
#include "backends/cuda/probe.hpp"
#include "harness/plan.hpp"
#include "reports/model.hpp"
#include "reports/store.hpp"

namespace mlsb {

class Progress;

/// The backend a case runs on, from the requested one ("cpu", "cuda", "auto") and the workload's list:
/// "auto" is "cuda" when the workload lists it and `gpu` has a device, else "cpu". Throws SkipCase when
/// the workload has no path for the request ("workload X has no cuda path") or cuda is requested and
/// `gpu` has no device (the probe's note says why).
std::string resolve_backend(const std::string& requested, const WorkloadInfo& info, const cuda::Probe& gpu);

/// The communicators of a run. `control` (host buffers: local or mpi) carries the runner's own traffic:
/// the same-case check, the stopping decision, the agreement on a case's status, the exit code. Each
/// case gets fresh duplicates: of `control` for the runner, of cases() for the workload (State::comm()).
struct RunComms {
  std::unique_ptr<comm::Communicator> control;
  std::unique_ptr<comm::Communicator> world;  ///< set for nccl (bootstrapped over control); else null

  /// For "auto" (resolve_comm_kind), "local", "mpi" or "nccl"; throws comm::CommError when unavailable.
  static RunComms create(const std::string& kind);
  comm::Communicator& cases() const { return world ? *world : *control; }
  int rank() const { return control->rank(); }
};

/// Why sampling stopped (stored in the case's reason when it is not "converged").
/// The rule (nvbench's stdrel idea): after `warmup` untimed samples, sample until
///   n >= max_samples, or measured time >= max_time_s, or
///   n >= min_samples and measured time >= min_time_s and rel. stddev of the primary metric <= max_noise.
bool should_stop(const RunnerDefaults& rules, int n, double measured_s, double primary_rel_stddev);

/// The calls of the workload's sample() that one measured sample repeats (RunnerDefaults::min_sample_s):
/// ceil(min_sample_s / call_s), at most kMaxBatch, when `allowed` (one rank, not counted under callgrind)
/// and the last warm-up call took call_s < min_sample_s seconds; else 1 (also without a warm-up: call_s
/// infinite). Ranks > 1 never batch: every rank must make the same calls, and their warm-ups differ.
int batch_calls(double min_sample_s, double call_s, bool allowed);

/// The key of a case's input data: "workload/a=1,b=x" over the axes the workload marks as data axes
/// (Axis::data), so cases that differ only in a method axis (a codec, a cache policy) share it.
std::string data_key(const WorkloadInfo& info, const Params& params);
/// Derives a case's seed from the run seed and its data key (FNV-1a 64 of the key, mixed with
/// splitmix64): the same run seed gives cases with the same data axes the same input, whatever the
/// order of the cases and whatever method each runs, so methods are compared on identical inputs.
uint64_t case_seed(uint64_t run_seed, const std::string& data_key);

/// Runs one case to completion or timeout, in a worker thread. Never throws for workload errors:
/// a SkipCase gives status Skipped, FailCase or any exception Failed, the timeout Timeout,
/// `cancel` set by the caller Interrupted; `reason` says why. Failed, timed-out and interrupted
/// cases keep no samples or summaries (their numbers are not trusted); items are kept (a case abandoned
/// at its timeout keeps those it had added by then). `on_tick` is called on the
/// calling thread about 5 times a second (for progress output and run_plan's commits of items).
/// `backend` is the request (resolve_backend). This form runs on one rank (a local communicator).
/// GPU state: rank 0 reads the GPUs its process sees through NVML just before the first measured sample
/// and just after the last, into `gpu` and `throttled` (cuda::case_gpu_record; {} and false without NVML
/// or a GPU, or when the case stopped before sampling). Other ranks' GPUs are not read.
struct CaseProgress {
  int samples = 0;                ///< measured samples so far
  int64_t done = 0;               ///< units of work done in the current sample (State::progress)
  int64_t total = 0;              ///< of this many (0 = unknown)
  const State* state = nullptr;   ///< the case's state once it exists (State::items_since is safe to call)
};
reports::CaseRecord run_case(const CaseSpec& spec, const std::string& backend, uint64_t run_seed,
                             const std::atomic<bool>& cancel,
                             const std::function<void(const CaseProgress&)>& on_tick = {});

struct RunOptions {
  uint64_t seed = 1;
  std::vector<std::string> tags;
  std::string argv;
  std::string backend = "cpu";  ///< cpu | cuda | auto (resolve_backend)
  std::string comm = "auto";     ///< auto | local | mpi | nccl (comm::resolve_comm_kind)
  std::string branch;            ///< the run's branch; "" = from git (project_git_info)
  /// What the run was told beyond its suite (reports::RunRecord::selection): filter, -p overrides, runner options.
  nlohmann::json selection = nlohmann::json::object();
  /// The uuid of the run whose worse cases this run re-runs to confirm a regression ("" = none); such a
  /// run is partial.
  std::string confirms;
  /// Runs one counted case (CaseSpec::measure "instructions") when this process does not run under
  /// callgrind (a suite that counts some cases and times others): the application runs it in a process of
  /// its own under callgrind. Without it, a counted case needs a process under
  /// callgrind (runner::counting()). Cases callgrind cannot count are skipped with the reason.
  /// It is given the case and its record so far (a stub, status Running), which it replaces or fills
  /// (status and reason) when the case could not be counted.
  std::function<void(const CaseSpec&, reports::CaseRecord&)> count_case;
  /// The uuid to store the run under ("" = a random one): a caller that starts `mlsysbench run` finds its run by it.
  std::string uuid;
};

struct RunOutcome {
  int64_t run_id = 0;
  std::string uuid;
  reports::RunStatus status = reports::RunStatus::Ok;
  int ok = 0, failed = 0, skipped = 0, timed_out = 0;
  /// A rank stopped answering (a collective between the ranks timed out or failed): the communicators
  /// are unusable, and MPI_Finalize would wait for that rank forever, so the job must end with MPI_Abort.
  bool broken = false;
};

/// Runs every case of `plan`, storing each in `store` as it starts (status Running), its items every
/// second while it runs (a killed run keeps what its case in flight finished) and its results when it ends. `interrupt` is polled: once set,
/// the case in flight is cancelled and recorded as interrupted, the run is marked Interrupted and no
/// further case starts. The run's status is Failed when any case failed or timed out.
/// This form creates the communicators of options.comm; on ranks other than 0 `store` and `progress`
/// are not touched.
RunOutcome run_plan(const Plan& plan, const RunOptions& options, reports::Store& store, Progress& progress,
                    const std::atomic<bool>& interrupt);

/// The same on every rank of comms.control, in lockstep: each case starts after a check that all ranks
/// are at it; the stopping rule is decided on rank 0 and shared after every measured sample; after the
/// case the ranks agree on its status (the worst wins: interrupted > timeout, failed > skipped > ok,
/// where a rank's own failure or hang outranks a collective that failed or timed out waiting for it),
/// and rank 0 keeps the reason of the first rank with that status ("rank N: ..." for N != 0). Only rank
/// 0 uses `store` and `progress` (others pass nullptr) and gets a run id; every rank gets the same
/// status and counts. Cases are recorded with comm = comms.cases().name() and ranks = its size.
/// Rank 0 rethrows a store error after the other ranks have been told to stop.
RunOutcome run_plan(const Plan& plan, const RunOptions& options, reports::Store* store, Progress* progress,
                    const std::atomic<bool>& interrupt, RunComms& comms);

}  // namespace mlsb
