#pragma once
// The runner's sampling step: one case's setup, warm-up, samples until the stopping rule holds (decided
// on rank 0 and agreed after every sample), verify and teardown, run on a worker thread and ending in a
// status and a reason. Internal to the runner (harness/runner.hpp is the API).
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "backends/comm/communicator.hpp"
#include "backends/cuda/gpu_state.hpp"
#include "harness/plan.hpp"
#include "harness/workload.hpp"
#include "reports/status.hpp"

namespace mlsb::runner {

/// One case's execution, shared by its worker thread and the watchdog (held by a std::shared_ptr, so
/// that a worker the watchdog abandoned keeps it alive). Set the inputs, then call run() on the worker;
/// the outputs are read once `done` is set (under `mutex`).
struct CaseExecution {
  // Inputs.
  CaseSpec spec;
  std::string backend;  ///< the request: cpu | cuda | auto (resolve_backend)
  uint64_t seed = 0;    ///< the case's seed (case_seed)
  std::filesystem::path work_dir;
  /// Count every measured sample under callgrind (run --measure instructions): the case records the
  /// instrument's metrics (runner/callgrind.hpp) instead of its own, and runs on the watching thread.
  bool counted = false;
  /// Called between measured samples (outside what is counted): a counted case's watchdog tick.
  std::function<void()> between_samples;
  /// `ctl` carries the ranks' per-sample agreement (the stopping decision); `comm` is the workload's.
  std::unique_ptr<comm::Communicator> ctl, comm;

  /// Set by the watchdog: the worker stops at its next check, and its collectives stop waiting.
  std::atomic<bool> cancel{false};

  // Progress, read by the watchdog while the worker runs.
  std::atomic<int> samples{0};              ///< measured samples so far
  std::atomic<State*> live_state{nullptr};  ///< set once the State exists (State::items_since is safe)

  // Completion.
  std::mutex mutex;
  std::condition_variable cv;
  bool done = false;

  // Outputs, read once done.
  reports::CaseStatus status = reports::CaseStatus::Ok;  ///< Ok, Failed, Skipped or Interrupted
  std::string reason;
  std::optional<WorkloadInfo> info;
  std::unique_ptr<State> state;
  std::string resolved_backend;  ///< set once resolve_backend succeeded
  bool peer_stopped = false;     ///< it ended because another rank stopped it
  bool comm_failure = false;     ///< it failed in a collective (often waiting for a rank that failed)
  bool own_error_first = false;  ///< the workload threw (failed, skipped) before any cancellation
  /// Rank 0's GPUs just before the first measured sample, just after the last, and the most throttled state
  /// read while they ran (cuda::GpuWatch, cuda::case_gpu_record).
  std::vector<cuda::GpuState> gpu_before, gpu_after, gpu_during;

  /// The worker's body. Never throws: SkipCase gives Skipped, FailCase or any other exception Failed,
  /// `cancel` Interrupted; `reason` says why. Then sets `done` and notifies `cv`.
  void run();

 private:
  bool syncing_ = true;  // false once the ranks agreed to stop sampling (no further agreement)
  int32_t agree(int32_t mine);
  void run_samples(Workload& w);
  void run_steps();
};

}  // namespace mlsb::runner
