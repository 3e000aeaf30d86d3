#pragma once
// The runner: executes a plan case by case (warm-up, samples until the stopping rule holds, verify),
// isolates failures and timeouts, and commits each case to the store when it ends.
#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "harness/plan.hpp"
#include "reports/model.hpp"
#include "reports/store.hpp"

namespace mlsb {

class Progress;

/// Why sampling stopped (stored in the case's reason when it is not "converged").
/// The rule (nvbench's stdrel idea): after `warmup` untimed samples, sample until
///   n >= max_samples, or measured time >= max_time_s, or
///   n >= min_samples and measured time >= min_time_s and rel. stddev of the primary metric <= max_noise.
bool should_stop(const RunnerDefaults& rules, int n, double measured_s, double primary_rel_stddev);

/// Derives a case's seed from the run seed and the case id (FNV-1a 64 of the id, mixed with splitmix64),
/// so the same run seed gives every case the same data whatever the order of cases.
uint64_t case_seed(uint64_t run_seed, const std::string& case_id);

/// Runs one case to completion or timeout, in a worker thread. Never throws for workload errors:
/// a SkipCase gives status "skipped", FailCase or any exception "failed", the timeout "timeout",
/// `cancel` set by the caller "interrupted"; `reason` says why. Failed, timed-out and interrupted
/// cases keep no samples or summaries (their numbers are not trusted); items are kept unless the
/// case timed out. `on_tick` is called on the calling thread about 5 times a second (for progress output).
struct CaseProgress {
  int samples = 0;       ///< measured samples so far
  int64_t done = 0;      ///< units of work done in the current sample (State::progress)
  int64_t total = 0;     ///< of this many (0 = unknown)
};
reports::CaseRecord run_case(const CaseSpec& spec, const std::string& backend, uint64_t run_seed,
                             const std::atomic<bool>& cancel,
                             const std::function<void(const CaseProgress&)>& on_tick = {});

struct RunOptions {
  uint64_t seed = 1;
  std::vector<std::string> tags;
  std::string argv;
  std::string backend = "cpu";
};

struct RunOutcome {
  int64_t run_id = 0;
  std::string uuid;
  std::string status;  ///< ok | failed | interrupted
  int ok = 0, failed = 0, skipped = 0, timed_out = 0;
};

/// Runs every case of `plan`, committing each to `store` as it ends. `interrupt` is polled: once set,
/// the case in flight is cancelled and recorded as interrupted, the run is marked "interrupted" and no
/// further case starts. The run's status is "failed" when any case failed or timed out.
RunOutcome run_plan(const Plan& plan, const RunOptions& options, reports::Store& store, Progress& progress,
                    const std::atomic<bool>& interrupt);

}  // namespace mlsb
