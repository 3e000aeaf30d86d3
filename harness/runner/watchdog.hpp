#pragma once
// The runner's watchdog: runs a case's execution on a worker thread, reports its progress, and cancels
// it at its timeout or on an interrupt, abandoning a worker that does not stop. Internal to the runner.
#include <atomic>
#include <functional>
#include <memory>

#include "harness/runner.hpp"
#include "harness/runner/sampling.hpp"

namespace mlsb::runner {

/// How a watched case ended.
struct WatchOutcome {
  bool finished = false;     ///< the worker ended and was joined; else it was abandoned (its outputs are not read)
  bool timed_out = false;    ///< it ran past its timeout and was cancelled
  bool interrupted = false;  ///< `interrupt` was set while it ran and it was cancelled
};

/// Runs `exec->run()` on a worker thread and waits for it, calling `on_tick` (when set) on this thread
/// about 5 times a second with its progress. Cancels it (exec->cancel) once `timeout_s` (0: none)
/// has passed or `interrupt` is set, then waits a grace period (5 s after a timeout, 2 s after an
/// interrupt) and abandons (detaches) a worker still running. With `several_ranks` an interrupted case
/// is abandoned at once: Open MPI kills a job's ranks about a second after its SIGTERM, and rank 0
/// must store the run before then.
WatchOutcome watch_case(const std::shared_ptr<CaseExecution>& exec, double timeout_s,
                        const std::atomic<bool>& interrupt, const std::function<void(const CaseProgress&)>& on_tick,
                        bool several_ranks);

}  // namespace mlsb::runner
