#include "harness/runner.hpp"

#include <stdlib.h>

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <filesystem>
#include <memory>
#include <mutex>
#include <thread>
#include <tuple>

#include "harness/environment.hpp"
#include "harness/progress.hpp"
#include "harness/registry.hpp"

namespace mlsb {
namespace {

using Clock = std::chrono::steady_clock;

double unix_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

struct Cancelled {};


// Everything the worker thread touches. Shared so that an abandoned (timed-out) worker keeps it alive.
struct CaseContext {
  CaseSpec spec;
  std::string backend;
  uint64_t seed = 0;
  std::atomic<bool> cancel{false};
  std::atomic<int> samples{0};
  std::atomic<State*> live_state{nullptr};  // set once the State exists, for progress polling
  std::mutex mutex;
  std::condition_variable cv;
  bool done = false;
  std::string status = "ok", reason;
  std::optional<WorkloadInfo> info;
  std::unique_ptr<State> state;
  std::filesystem::path work_dir;

  void run_samples(Workload& w) {
    State& st = *state;
    const RunnerDefaults& rules = spec.runner;
    for (int i = 0; i < rules.warmup; ++i) {
      if (cancel) throw Cancelled{};
      st.begin_sample(-1 - i, true);
      w.sample(st);
    }
    double measured = 0;
    int n = 0;
    double noise = INFINITY;
    while (true) {
      if (cancel) throw Cancelled{};
      st.begin_sample(n, false);
      const auto t0 = Clock::now();
      w.sample(st);
      if (cancel) throw Cancelled{};  // a cancelled sample may be partial: never recorded
      measured += std::chrono::duration<double>(Clock::now() - t0).count();
      ++n;
      samples = n;
      const auto it = st.samples().find(info->primary_metric);
      if (it == st.samples().end() || static_cast<int>(it->second.size()) != n)
        st.fail("sample " + std::to_string(n - 1) + " did not record the primary metric '" + info->primary_metric + "'");
      noise = relative_stddev(it->second);
      if (should_stop(rules, n, measured, noise)) break;
    }
    if (n >= 2 && noise > rules.max_noise) {
      char buf[160];
      std::snprintf(buf, sizeof buf, "noisy: relative stddev of %s is %.2f%% after %d samples (bound %.2f%%)",
                    info->primary_metric.c_str(), noise * 100, n, rules.max_noise * 100);
      reason = buf;
    }
  }

  void run() {
    try {
      auto workload = make_workload(spec.workload);
      info = workload->info();
      state = std::make_unique<State>(*info, spec.params, seed, work_dir);
      state->set_cancel_flag(&cancel);
      live_state = state.get();
      if (backend != "cpu" && backend != "auto")
        state->skip("backend '" + backend + "' is not available for workload '" + spec.workload + "'");
      workload->setup(*state);
      try {
        run_samples(*workload);
        workload->verify(*state);
      } catch (...) {
        try {
          workload->teardown(*state);
        } catch (...) {
        }
        throw;
      }
      workload->teardown(*state);
    } catch (const Cancelled&) {
      status = "interrupted";
    } catch (const SkipCase& e) {
      status = "skipped";
      reason = e.what();
    } catch (const FailCase& e) {
      status = "failed";
      reason = e.what();
    } catch (const std::exception& e) {
      status = "failed";
      reason = std::string("error: ") + e.what();
    } catch (...) {
      status = "failed";
      reason = "error: unknown exception";
    }
    std::lock_guard lock(mutex);
    done = true;
    cv.notify_all();
  }
};

std::filesystem::path make_work_dir() {
  std::string templ = (std::filesystem::temp_directory_path() / "mlsb-case-XXXXXX").string();
  if (!mkdtemp(templ.data())) throw std::runtime_error("cannot create a case work directory in " + templ);
  return templ;
}

std::string format_seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f s", s);
  return buf;
}

// Commits a case, waiting out another writer's lock (SQLite's busy timeout, then a few retries) so a
// finished case is not lost to a passing lock; any other store failure ends the run as failed.
void store_case(reports::Store& store, int64_t run_id, reports::CaseRecord& rec) {
  for (int attempt = 1;; ++attempt) {
    try {
      store.add_case(run_id, rec);
      return;
    } catch (const reports::StoreError& e) {
      const std::string what = e.what();
      const bool busy = what.find("locked") != std::string::npos || what.find("busy") != std::string::npos;
      if (!busy || attempt == 6) {
        try {
          store.finish_run(run_id, "failed");
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

bool should_stop(const RunnerDefaults& r, int n, double measured_s, double noise) {
  if (n >= r.max_samples) return true;
  if (n >= 1 && measured_s >= r.max_time_s) return true;
  return n >= r.min_samples && measured_s >= r.min_time_s && noise <= r.max_noise;
}

uint64_t case_seed(uint64_t run_seed, const std::string& case_id) {
  uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a 64
  for (unsigned char c : case_id) h = (h ^ c) * 0x100000001b3ULL;
  return splitmix64(run_seed ^ h);
}

reports::CaseRecord run_case(const CaseSpec& spec, const std::string& backend, uint64_t run_seed,
                             const std::atomic<bool>& cancel,
                             const std::function<void(const CaseProgress&)>& on_tick) {
  reports::CaseRecord rec;
  rec.workload = spec.workload;
  rec.params = to_json(spec.params);
  rec.params_key = params_key(spec.params);
  rec.label = spec.label;
  rec.backend = backend == "auto" ? "cpu" : backend;
  rec.started_at = unix_now();

  auto ctx = std::make_shared<CaseContext>();
  ctx->spec = spec;
  ctx->backend = backend;
  ctx->seed = case_seed(run_seed, spec.id());
  try {
    ctx->work_dir = make_work_dir();
  } catch (const std::exception& e) {
    rec.status = "failed";
    rec.reason = e.what();
    rec.finished_at = unix_now();
    return rec;
  }

  std::thread worker([ctx] { ctx->run(); });
  const auto start = Clock::now();
  const double timeout = spec.runner.timeout_s;
  bool timed_out = false, interrupted = false;
  Clock::time_point cancelled_at;
  {
    std::unique_lock lock(ctx->mutex);
    while (!ctx->done) {
      ctx->cv.wait_for(lock, std::chrono::milliseconds(200));
      if (ctx->done) break;
      lock.unlock();
      if (on_tick) {
        CaseProgress p{ctx->samples.load()};
        if (const State* st = ctx->live_state.load()) std::tie(p.done, p.total) = st->progress();
        on_tick(p);
      }
      lock.lock();
      const auto now = Clock::now();
      if (!ctx->cancel) {
        interrupted = cancel.load();
        timed_out = !interrupted && timeout > 0 && std::chrono::duration<double>(now - start).count() > timeout;
        if (interrupted || timed_out) {
          ctx->cancel = true;
          cancelled_at = now;
        }
      } else if (std::chrono::duration<double>(now - cancelled_at).count() > (interrupted ? 2.0 : 5.0)) {
        break;  // it did not stop within the grace period: abandon it
      }
    }
  }
  const bool finished = [&] {
    std::lock_guard lock(ctx->mutex);
    return ctx->done;
  }();
  if (finished) {
    worker.join();
  } else {
    worker.detach();  // the context stays alive with the thread; its results are not read
  }

  rec.finished_at = unix_now();
  const WorkloadInfo* info = finished && ctx->info ? &*ctx->info : nullptr;
  if (info) rec.primary_metric = info->primary_metric;
  if (timed_out) {
    rec.status = "timeout";
    rec.reason = "timed out after " + format_seconds(timeout) + (finished ? "" : " (still running; abandoned)");
  } else if (interrupted || ctx->status == "interrupted") {
    rec.status = "interrupted";
    rec.reason = "interrupted by the user";
  } else {
    rec.status = ctx->status;
    rec.reason = ctx->reason;
  }
  if (finished && ctx->state) {
    for (const auto& w : ctx->state->warnings())
      rec.reason += (rec.reason.empty() ? "warning: " : "; warning: ") + w;
    rec.items = std::move(ctx->state->items());
    if (rec.status == "ok") {
      rec.samples = ctx->state->samples();
      for (const auto& [metric, values] : rec.samples) {
        const Metric* m = info->find_metric(metric);
        rec.summaries.push_back({metric, m->unit, m->better, summarize(values, ctx->seed)});
      }
    }
  }
  if (finished) {
    std::error_code ec;
    std::filesystem::remove_all(ctx->work_dir, ec);
  }
  return rec;
}

RunOutcome run_plan(const Plan& plan, const RunOptions& options, reports::Store& store, Progress& progress,
                    const std::atomic<bool>& interrupt) {
  reports::RunRecord run;
  run.suite = plan.suite;
  run.argv = options.argv;
  run.tags = options.tags;
  run.seed = options.seed;
  const GitInfo git = project_git_info();
  run.git_sha = git.sha;
  run.git_dirty = git.dirty;
  run.env = capture_environment();
  RunOutcome out;
  out.run_id = store.begin_run(run);
  out.uuid = run.uuid;  // assigned by the store
  bool interrupted = false;
  for (size_t i = 0; i < plan.cases.size() && !interrupted; ++i) {
    const CaseSpec& spec = plan.cases[i];
    progress.case_started(static_cast<int>(i), spec.display_name());
    reports::CaseRecord rec = run_case(spec, options.backend, options.seed, interrupt,
                                       [&](const CaseProgress& p) { progress.tick(p.samples, p.done, p.total); });
    store_case(store, out.run_id, rec);
    progress.case_finished(rec);
    if (rec.status == "ok") ++out.ok;
    else if (rec.status == "skipped") ++out.skipped;
    else if (rec.status == "timeout") ++out.timed_out;
    else if (rec.status == "interrupted") interrupted = true;
    else ++out.failed;
    if (interrupt) interrupted = true;
  }
  out.status = interrupted ? "interrupted" : (out.failed || out.timed_out) ? "failed" : "ok";
  store.finish_run(out.run_id, out.status);
  return out;
}

}  // namespace mlsb
