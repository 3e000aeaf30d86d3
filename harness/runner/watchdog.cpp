#include "harness/runner/watchdog.hpp"

#include <chrono>
#include <thread>
#include <tuple>

#include "util/clock.hpp"

namespace mlsb::runner {

WatchOutcome watch_case(const std::shared_ptr<CaseExecution>& exec, double timeout_s,
                        const std::atomic<bool>& interrupt, const std::function<void(const CaseProgress&)>& on_tick,
                        bool several_ranks) {
  WatchOutcome out;
  const auto start = Clock::now();
  const auto tick = [&] {
    if (!on_tick) return;
    CaseProgress p{exec->samples.load()};
    if (const State* st = exec->live_state.load()) {
      std::tie(p.done, p.total) = st->progress();
      p.state = st;
    }
    on_tick(p);
  };
  if (exec->counted) {
    // A counted case runs on this thread: a watchdog waking during a sample would be counted with it. Its
    // tick, timeout and interrupt checks run between samples (a sample itself is never cut short).
    exec->between_samples = [&] {
      tick();
      out.interrupted = interrupt.load();
      out.timed_out = !out.interrupted && timeout_s > 0 && seconds_since(start) > timeout_s;
      if (out.interrupted || out.timed_out) exec->cancel = true;
    };
    exec->run();
    out.finished = true;
    return out;
  }
  std::thread worker([exec] { exec->run(); });
  Clock::time_point cancelled_at;
  {
    std::unique_lock lock(exec->mutex);
    while (!exec->done) {
      exec->cv.wait_for(lock, std::chrono::milliseconds(200));
      if (exec->done) break;
      lock.unlock();
      tick();
      lock.lock();
      const auto now = Clock::now();
      if (!exec->cancel) {
        out.interrupted = interrupt.load();
        out.timed_out =
            !out.interrupted && timeout_s > 0 && std::chrono::duration<double>(now - start).count() > timeout_s;
        if (out.interrupted || out.timed_out) {
          exec->cancel = true;
          cancelled_at = now;
        }
      } else if (std::chrono::duration<double>(now - cancelled_at).count() > (out.interrupted ? 2.0 : 5.0)) {
        break;  // it did not stop within the grace period: abandon it
      }
      if (out.interrupted && several_ranks) break;
    }
  }
  out.finished = [&] {
    std::lock_guard lock(exec->mutex);
    return exec->done;
  }();
  if (out.finished) {
    worker.join();
  } else {
    worker.detach();  // the execution stays alive with the thread; its outputs are not read
  }
  return out;
}

}  // namespace mlsb::runner
