#include "harness/runner.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <optional>
#include <thread>

#include "backends/comm/local_communicator.hpp"
#include "backends/comm/mpi_communicator.hpp"
#ifdef MLSB_HAVE_NCCL
#include "backends/comm/nccl_communicator.hpp"
#endif
#include "harness/environment.hpp"
#include "harness/machine_key.hpp"
#include "harness/progress.hpp"
#include "harness/callgrind.hpp"
#include "harness/runner/ranked_case.hpp"
#include "harness/runner/work_dir.hpp"
#include "util/clock.hpp"
#include "util/text.hpp"

// The plan loop; one case's sampling, watchdog and rank vote are in harness/runner/.
namespace mlsb {
namespace {

using reports::CaseStatus;
using runner::CaseResult;
using runner::case_stub;

// Runs `write` (a case's commit), waiting out another writer's lock (SQLite's busy timeout, then a few
// retries) so a finished case is not lost to a passing lock; any other store failure ends the run as
// failed.
void with_store_retries(reports::Store& store, int64_t run_id, const reports::CaseRecord& rec,
                        const std::function<void()>& write) {
  for (int attempt = 1;; ++attempt) {
    try {
      write();
      return;
    } catch (const reports::StoreError& e) {
      const std::string what = e.what();
      const bool busy = what.find("locked") != std::string::npos || what.find("busy") != std::string::npos;
      if (!busy || attempt == 6) {
        try {
          store.finish_run(run_id, reports::RunStatus::Failed);
        } catch (const reports::StoreError&) {
        }
        throw reports::StoreError("case " + rec.workload + "/" + rec.params_key + " could not be stored: " + what);
      }
      std::fprintf(stderr, "mlsysbench: store busy (%s); retry %d of 5 in 5 s\n", what.c_str(), attempt);
      std::this_thread::sleep_for(std::chrono::seconds(5));
    }
  }
}

}  // namespace

RunComms RunComms::create(const std::string& kind) {
  const std::string k = comm::resolve_comm_kind(kind);
  RunComms c;
  if (k == "local") {
    c.control = comm::make_local_communicator();
  } else {
    c.control = comm::make_mpi_communicator();
    if (k == "nccl") {
#ifdef MLSB_HAVE_NCCL
      c.world = comm::make_nccl_communicator(*c.control);
#else
      throw comm::CommError("nccl: built without CUDA/NCCL");
#endif
    }
  }
  return c;
}

reports::CaseRecord run_case(const CaseSpec& spec, const std::string& backend, uint64_t run_seed,
                             const std::atomic<bool>& cancel,
                             const std::function<void(const CaseProgress&)>& on_tick) {
  RunComms local{comm::make_local_communicator(), nullptr};
  return runner::run_ranked_case(spec, backend, run_seed, cancel, on_tick, local).rec;
}

RunOutcome run_plan(const Plan& plan, const RunOptions& options, reports::Store& store, Progress& progress,
                    const std::atomic<bool>& interrupt) {
  RunComms comms = RunComms::create(options.comm);
  const bool root = comms.rank() == 0;
  return run_plan(plan, options, root ? &store : nullptr, root ? &progress : nullptr, interrupt, comms);
}

RunOutcome run_plan(const Plan& plan, const RunOptions& options, reports::Store* store, Progress* progress,
                    const std::atomic<bool>& interrupt, RunComms& comms) {
  comm::Communicator& control = *comms.control;
  const bool root = control.rank() == 0;
  if (root && !store) throw std::invalid_argument("run_plan: rank 0 needs the store");
  control.set_cancel_flag(&interrupt);  // a killed job must not wait for ranks that are gone
  control.set_settle_time(0);  // after a signal the rank makes no MPI call, and SIGKILL follows in 1 s
  if (plan.counted() && !counting() && !options.count_case)
    throw std::invalid_argument(
        "--measure instructions: this process does not run under callgrind (mlsysbench run re-executes itself "
        "under valgrind)");
  RunOutcome out;
  std::optional<reports::StoreError> store_error;
  if (root) {
    reports::RunRecord run;
    run.uuid = options.uuid;
    run.suite = plan.suite;
    run.argv = options.argv;
    run.tags = options.tags;
    run.seed = options.seed;
    run.selection = options.selection;
    run.confirms = options.confirms;
    run.partial = !options.confirms.empty() || !options.selection.value("filter", "").empty();
    const GitInfo git = project_git_info();
    run.git_sha = git.sha;
    run.git_dirty = git.dirty;
    run.branch = options.branch.empty() ? git.branch : options.branch;
    run.env = capture_environment();
    if (plan.counted()) {  // what the counts depend on besides the build
      const CacheConfig caches;
      run.env["instrument"] = {{"measure", "instructions"}, {"tool", "callgrind"},
                               {"caches", {{"I1", caches.i1}, {"D1", caches.d1}, {"LL", caches.ll}}}};
    }
    run.machine_key = machine_key(run.env);
    run.ci = ci_metadata();
    run.pid = getpid();  // so that a later command can tell this run from one whose process was killed
    run.host = run.env.value("host", "");
    runner::remove_dead_case_work_dirs();
    try {
      out.run_id = store->begin_run(run);
      out.uuid = run.uuid;  // assigned by the store
    } catch (const reports::StoreError& e) {
      store_error = e;
    }
  }
  bool interrupted = false, broken = false;
  for (size_t i = 0;; ++i) {
    if (interrupt) break;  // a signalled rank makes no MPI call (see run_ranked_case); rank 0 stops anyway
    // Rank 0 alone knows whether the store still works: it says whether the next case starts.
    // Rank 0 stores the case as it starts (before the ranks agree to run it: a store that fails ends the
    // run first) and its items every second while it runs, so that a killed run keeps what its case in
    // flight had finished (the task trials of a long toolbench case, say).
    reports::CaseRecord stored;
    if (root && i < plan.cases.size() && !interrupted && !broken && !store_error) {
      stored = case_stub(plan.cases[i], comms);
      try {
        with_store_retries(*store, out.run_id, stored, [&] { store->begin_case(out.run_id, stored); });
      } catch (const reports::StoreError& e) {
        store_error = e;
      }
    }
    int32_t go = root && i < plan.cases.size() && !interrupted && !broken && !store_error ? 1 : 0;
    try {
      control.set_timeout(120);
      control.broadcast(&go, 1, comm::ElemType::I32, 0);
    } catch (const comm::CommError&) {
      broken = true;
      go = 0;
    }
    if (!go) break;
    const CaseSpec& spec = plan.cases[i];
    size_t items_stored = 0;
    auto last_flush = std::chrono::steady_clock::now();
    CaseResult result;
    try {
      control.expect_same("case (the ranks run different plans?)", fnv1a64(spec.id()));
      if (progress) progress->case_started(static_cast<int>(i), spec.display_name());
      if (spec.measure == "instructions" && !counting()) {
        // Counted in a process of its own under callgrind: one process, so not under MPI ranks.
        result.rec = case_stub(spec, comms);
        if (control.size() > 1) {
          result.rec.status = CaseStatus::Skipped;
          result.rec.reason = "--measure instructions counts one process: not under MPI ranks > 1";
        } else {
          options.count_case(spec, result.rec);
        }
        result.rec.finished_at = unix_now();
      } else {
        result = runner::run_ranked_case(spec, options.backend, options.seed, interrupt, [&](const CaseProgress& p) {
          if (progress) progress->tick(p.samples, p.done, p.total);
          const auto now = std::chrono::steady_clock::now();
          if (root && stored.id > 0 && p.state && !interrupt && now - last_flush >= std::chrono::seconds(1)) {
            last_flush = now;
            try {
              const auto items = p.state->items_since(items_stored);
              store->add_items(stored.id, items);
              items_stored += items.size();
            } catch (const reports::StoreError&) {
              // a busy store (add_items does not wait): these items go with the next flush or the case's end
            }
          }
        }, comms, spec.measure == "instructions");
      }
    } catch (const comm::CommError& e) {
      result.rec = case_stub(spec, comms);
      result.rec.finished_at = unix_now();
      result.rec.status = interrupt ? CaseStatus::Interrupted : CaseStatus::Failed;
      result.rec.reason = e.what();
      result.interrupted = interrupt.load();
      result.broken = !result.interrupted;
    }
    reports::CaseRecord& rec = result.rec;
    if (root) {
      rec.id = stored.id;
      rec.started_at = stored.started_at;
      try {
        if (!store_error)
          with_store_retries(*store, out.run_id, rec, [&] { store->finish_case(rec, items_stored); });
      } catch (const reports::StoreError& e) {
        store_error = e;
      }
      if (progress) progress->case_finished(rec);
    }
    if (rec.status == CaseStatus::Ok) ++out.ok;
    else if (rec.status == CaseStatus::Skipped) ++out.skipped;
    else if (rec.status == CaseStatus::Timeout) ++out.timed_out;
    else if (rec.status != CaseStatus::Interrupted) ++out.failed;
    interrupted = interrupted || result.interrupted || rec.status == CaseStatus::Interrupted || interrupt;
    broken = broken || result.broken;
  }
  interrupted = interrupted || interrupt;
  out.broken = broken;
  out.status = interrupted                                  ? reports::RunStatus::Interrupted
               : (out.failed || out.timed_out || broken) ? reports::RunStatus::Failed
                                                         : reports::RunStatus::Ok;
  if (root) {
    if (store_error) throw *store_error;  // with_store_retries already marked the run failed
    store->finish_run(out.run_id, out.status);
  }
  return out;
}

}  // namespace mlsb
