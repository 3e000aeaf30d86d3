#pragma once
// One case on every rank of a run: its execution under the watchdog, its record, and the rank vote.
// Internal to the runner (harness/runner.hpp is the API).
#include <atomic>
#include <cstdint>
#include <functional>
#include <string>

#include "harness/plan.hpp"
#include "harness/runner.hpp"
#include "reports/model.hpp"

namespace mlsb::runner {

/// A case's record on this rank after the vote, and what the vote means for the run.
struct CaseResult {
  reports::CaseRecord rec;
  bool interrupted = false;  ///< some rank was interrupted: the run stops
  bool broken = false;       ///< the ranks could not agree: the run stops, failed
};

/// The record of a case about to start: what it is and where it runs (comm, ranks), started now.
reports::CaseRecord case_stub(const CaseSpec& spec, RunComms& comms);

/// Runs one case on this rank (sampling under the watchdog, with `spec.runner.timeout_s`), builds its
/// record (samples and summaries only when ok; items always; GPU state; warnings appended to the
/// reason), then votes with the other ranks of comms.control on its status (vote_on_case). `counted`: every
/// measured sample counted under callgrind (CaseExecution::counted).
CaseResult run_ranked_case(const CaseSpec& spec, const std::string& backend, uint64_t run_seed,
                           const std::atomic<bool>& cancel, const std::function<void(const CaseProgress&)>& on_tick,
                           RunComms& comms, bool counted = false);

}  // namespace mlsb::runner
