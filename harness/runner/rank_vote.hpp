#pragma once
// The runner's rank vote: after a case, the ranks agree on its status, so that every rank reports the
// same outcome and rank 0 stores the one that explains it. Internal to the runner.
#include <atomic>

#include "backends/comm/communicator.hpp"
#include "reports/model.hpp"

namespace mlsb::runner {

/// What a rank knows of its own case, beyond its record.
struct RankCase {
  bool peer_stopped = false;  ///< its case stopped because another rank stopped it
  bool comm_failure = false;  ///< its case failed in a collective (likely waiting for a failed rank)
};

/// The vote's result on this rank.
struct VoteOutcome {
  bool interrupted = false;  ///< some rank was interrupted (or a signal cut the vote short): the run stops
  bool broken = false;       ///< the ranks could not agree (a rank gone, a timeout): the run stops, failed
};

/// Every rank learns every rank's status through one allgather over `control` of a fixed-size vote
/// (severity, status, whether the rank was interrupted, and the reason cut to about 1000 bytes). The
/// worst wins, the lowest rank among equals: interrupted > timeout of an abandoned case > failed >
/// timeout > failed in a collective > skipped > stopped by another rank > ok (a rank's own failure or
/// hang outranks a collective that failed or timed out waiting for it). When another rank's status
/// wins, `rec` takes it with that rank's reason ("rank N: <reason>" for N != 0) and loses its samples
/// and summaries. When the vote itself fails, `rec` becomes Failed ("the ranks could not agree ..."), or
/// Interrupted when `cancel` is set, and the outcome is broken. After a signal (`cancel` set, several
/// ranks) no MPI call is made: the job is about to end. `case_timeout_s` (0: none) bounds the wait for
/// the slowest rank.
VoteOutcome vote_on_case(reports::CaseRecord& rec, const RankCase& mine, const std::atomic<bool>& cancel,
                         comm::Communicator& control, double case_timeout_s);

}  // namespace mlsb::runner
