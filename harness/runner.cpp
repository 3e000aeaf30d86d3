#include "harness/runner.hpp"

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <condition_variable>
#include <filesystem>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <thread>
#include <tuple>

#include "backends/comm/local_communicator.hpp"
#include "backends/comm/mpi_communicator.hpp"
#include "backends/cuda/gpu_state.hpp"
#ifdef MLSB_HAVE_NCCL
#include "backends/comm/nccl_communicator.hpp"
#endif
#include "util/clock.hpp"
#include "harness/environment.hpp"
#include "harness/machine_key.hpp"
#include "util/process_state.hpp"
#include "harness/progress.hpp"
#include "harness/registry.hpp"
#include "util/text.hpp"

namespace mlsb {
namespace {


struct Cancelled {};
// Another rank stopped the case (it failed or skipped); this rank stops at the same point.
struct PeerStopped {};

// What the ranks agree on after every step of a case (allreduce max over the case's control comm).
constexpr int32_t kGo = 0, kStop = 1, kAbort = 2;
// The workload's communicator's timeout per collective (the Communicator default); workloads may change it.
constexpr double kCaseCommTimeout = 60.0;

const cuda::Probe& gpu_probe() {
  static const cuda::Probe probe = cuda::probe();
  return probe;
}

// The state of the GPUs this process sees (CUDA's devices, CUDA_VISIBLE_DEVICES honoured); none, at no
// cost, without a GPU or NVML.
std::vector<cuda::GpuState> read_visible_gpus() {
  static const std::vector<std::string> bus_ids = [] {
    std::vector<std::string> ids;
    for (const auto& g : gpu_probe().gpus) ids.push_back(g.pci_bus_id);
    return ids;
  }();
  return cuda::read_gpu_states(bus_ids);
}

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
  std::string resolved_backend;  // set once resolve_backend succeeded
  bool peer_stopped = false;     // the case ended because another rank stopped it
  bool comm_failure = false;     // it failed in a collective (often waiting for a rank that failed)
  bool own_error_first = false;  // the workload threw (failed, skipped) before any cancellation
  // The case's own communicators: `ctl` for the runner's per-sample agreement, `comm` for the workload.
  std::unique_ptr<comm::Communicator> ctl, comm;
  bool syncing = true;  // false once the ranks have agreed to stop sampling (no further agreement)
  // Rank 0's GPUs just before the first measured sample and just after the last (cuda::case_gpu_record).
  std::vector<cuda::GpuState> gpu_before, gpu_after;

  // Every rank passes its code; all get the largest. kAbort from another rank stops this one.
  int32_t agree(int32_t mine) {
    int32_t v = mine;
    ctl->allreduce(&v, &v, 1, comm::ElemType::I32, comm::ReduceOp::Max);
    if (v >= kAbort && mine < kAbort) throw PeerStopped{};
    return v;
  }

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
    const bool read_gpus = ctl->rank() == 0;  // the rank that stores the case reads the GPUs it sees
    if (read_gpus) gpu_before = read_visible_gpus();
    while (true) {
      if (cancel) throw Cancelled{};
      st.begin_sample(n, false);
      const auto t0 = Clock::now();
      w.sample(st);
      if (cancel) throw Cancelled{};  // a cancelled sample may be partial: never recorded
      measured += seconds_since(t0);
      ++n;
      samples = n;
      const auto it = st.samples().find(info->primary_metric);
      if (it == st.samples().end() || static_cast<int>(it->second.size()) != n)
        st.fail("sample " + std::to_string(n - 1) + " did not record the primary metric '" + info->primary_metric + "'");
      noise = relative_stddev(it->second);
      // Rank 0 decides, so every rank takes the same number of samples.
      const bool stop = ctl->rank() == 0 && should_stop(rules, n, measured, noise);
      if (agree(stop ? kStop : kGo) == kStop) break;
    }
    if (read_gpus) gpu_after = read_visible_gpus();
    syncing = false;
    if (n >= 2 && noise > rules.max_noise) {
      char buf[160];
      std::snprintf(buf, sizeof buf, "noisy: relative stddev of %s is %.2f%% after %d samples (bound %.2f%%)",
                    info->primary_metric.c_str(), noise * 100, n, rules.max_noise * 100);
      reason = buf;
    }
  }

  // Setup, samples and verify; a rank whose step throws tells the others (kAbort) before rethrowing,
  // so they stop at their next agreement instead of waiting for it.
  void run_steps() {
    try {
      auto workload = make_workload(spec.workload);
      info = workload->info();
      state = std::make_unique<State>(*info, spec.params, seed, work_dir);
      state->set_cancel_flag(&cancel);
      state->set_comm(comm.get());
      live_state = state.get();
      resolved_backend = resolve_backend(backend, *info, gpu_probe());
      state->set_backend(resolved_backend);
      try {
        workload->setup(*state);
        try {
          agree(kGo);
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
      } catch (const std::bad_alloc&) {
        // An allocation the machine cannot satisfy fails the case with what it needed, not "std::bad_alloc".
        const std::string hint = workload->memory_hint(*state);
        throw FailCase("out of memory: the case's buffers do not fit in this machine's memory" +
                       (hint.empty() ? "" : " (" + hint + ")"));
      }
    } catch (const Cancelled&) {
      throw;
    } catch (const PeerStopped&) {
      throw;
    } catch (...) {
      own_error_first = !cancel;
      if (syncing && !cancel) {
        try {
          agree(kAbort);
        } catch (...) {
        }
      }
      throw;
    }
  }

  void run() {
    try {
      run_steps();
    } catch (const Cancelled&) {
      status = "interrupted";
    } catch (const PeerStopped&) {
      status = "failed";
      peer_stopped = true;
      reason = "stopped because another rank failed";
    } catch (const SkipCase& e) {
      status = "skipped";
      reason = e.what();
    } catch (const FailCase& e) {
      status = "failed";
      reason = e.what();
    } catch (const comm::CommError& e) {
      status = "failed";
      comm_failure = true;
      reason = std::string("error: ") + e.what();
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

// Case work folders are "mlsb-case-<pid>-XXXXXX" in the temp folder: the pid tells a live run's folder
// from one a killed run left behind.
constexpr std::string_view kWorkDirPrefix = "mlsb-case-";

std::filesystem::path make_work_dir() {
  std::string templ = (std::filesystem::temp_directory_path() /
                       (std::string(kWorkDirPrefix) + std::to_string(getpid()) + "-XXXXXX"))
                          .string();
  if (!mkdtemp(templ.data())) throw std::runtime_error("cannot create a case work directory in " + templ);
  return templ;
}

// Removes the case folders that runs of processes now gone left in the temp folder (a run killed with
// SIGKILL or by the OOM killer never removes its own). Folders of live processes are left alone.
void remove_dead_work_dirs() {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::temp_directory_path(), ec)) {
    const std::string name = entry.path().filename().string();
    if (!name.starts_with(kWorkDirPrefix)) continue;
    const std::string rest = name.substr(kWorkDirPrefix.size());
    const size_t dash = rest.find('-');
    if (dash == 0 || dash == std::string::npos || rest.find_first_not_of("0123456789") != dash) continue;
    const int64_t pid = std::stoll(rest.substr(0, dash));
    std::error_code stat_ec;
    const auto written = std::filesystem::last_write_time(entry.path(), stat_ec);
    if (stat_ec) continue;
    const double written_unix =
        std::chrono::duration<double>(std::chrono::file_clock::to_sys(written).time_since_epoch()).count();
    if (!process_running_since(pid, written_unix)) std::filesystem::remove_all(entry.path(), stat_ec);
  }
}

std::string format_seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f s", s);
  return buf;
}

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

// The record of a case about to start: what it is and where it runs, started now.
reports::CaseRecord case_stub(const CaseSpec& spec, RunComms& comms) {
  reports::CaseRecord rec;
  rec.workload = spec.workload;
  rec.params = to_json(spec.params);
  rec.params_key = params_key(spec.params);
  rec.label = spec.label;
  rec.comm = comms.cases().name();
  rec.ranks = comms.cases().size();
  rec.started_at = unix_now();
  return rec;
}

// Severity of a rank's case status for the agreement: the worst wins. Consequences rank below their
// likely cause: a rank stopped by another, a collective that failed or timed out waiting for a rank
// that failed (or hung: an abandoned case outranks a failure).
int severity(const reports::CaseRecord& rec, bool peer_stopped, bool comm_failure) {
  if (rec.status == "ok") return 0;
  if (peer_stopped) return 1;
  if (rec.status == "skipped") return 2;
  if (rec.status == "failed" && comm_failure) return 3;
  if (rec.status == "timeout" && rec.reason.find("abandoned") == std::string::npos) return 4;
  if (rec.status == "failed") return 5;
  if (rec.status == "timeout") return 6;
  return 7;  // interrupted
}

// One rank's vote, a fixed-size record so one allgather carries every rank's.
constexpr size_t kVoteBytes = 1024, kStatusBytes = 16;
struct Vote {
  uint8_t severity = 0;
  uint8_t interrupted = 0;
  std::string status, reason;
};

std::vector<uint8_t> encode(const Vote& v) {
  std::vector<uint8_t> buf(kVoteBytes, 0);
  buf[0] = v.severity;
  buf[1] = v.interrupted;
  std::memcpy(&buf[2], v.status.data(), std::min(v.status.size(), kStatusBytes - 1));
  const std::string reason = utf8_truncate(v.reason, kVoteBytes - 2 - kStatusBytes - 1);
  std::memcpy(&buf[2 + kStatusBytes], reason.data(), reason.size());
  return buf;
}

Vote decode(const uint8_t* buf) {
  Vote v;
  v.severity = buf[0];
  v.interrupted = buf[1];
  const auto text = [](const uint8_t* p, size_t max) {
    const auto* c = reinterpret_cast<const char*>(p);
    return std::string(c, strnlen(c, max));
  };
  v.status = text(buf + 2, kStatusBytes);
  v.reason = text(buf + 2 + kStatusBytes, kVoteBytes - 2 - kStatusBytes);
  return v;
}

struct CaseResult {
  reports::CaseRecord rec;
  bool interrupted = false;  // some rank was interrupted: the run stops
  bool broken = false;       // the ranks could not agree: the run stops, failed
};

// Runs one case on this rank (steps above), then agrees with the other ranks on its status.
CaseResult run_ranked_case(const CaseSpec& spec, const std::string& backend, uint64_t run_seed,
                           const std::atomic<bool>& cancel, const std::function<void(const CaseProgress&)>& on_tick,
                           RunComms& comms) {
  CaseResult result;
  reports::CaseRecord& rec = result.rec;
  rec = case_stub(spec, comms);

  auto ctx = std::make_shared<CaseContext>();
  ctx->spec = spec;
  ctx->backend = backend;
  ctx->seed = case_seed(run_seed, data_key(make_workload(spec.workload)->info(), spec.params));
  const double timeout = spec.runner.timeout_s;
  bool ready = false;
  try {
    ctx->ctl = comm::duplicate(*comms.control);
    ctx->comm = comm::duplicate(comms.cases());
    ctx->ctl->set_timeout(timeout > 0 ? timeout + 30 : 1e9);  // a sample may take up to the case timeout
    ctx->comm->set_timeout(kCaseCommTimeout);
    ctx->ctl->set_cancel_flag(&ctx->cancel);
    ctx->comm->set_cancel_flag(&ctx->cancel);
    ctx->work_dir = make_work_dir();
    ready = true;
  } catch (const std::exception& e) {
    rec.status = "failed";
    rec.reason = e.what();
  }

  bool timed_out = false, interrupted = false, finished = false;
  const bool several_ranks = comms.control->size() > 1;
  if (ready) {
    std::thread worker([ctx] { ctx->run(); });
    const auto start = Clock::now();
    Clock::time_point cancelled_at;
    {
      std::unique_lock lock(ctx->mutex);
      while (!ctx->done) {
        ctx->cv.wait_for(lock, std::chrono::milliseconds(200));
        if (ctx->done) break;
        lock.unlock();
        if (on_tick) {
          CaseProgress p{ctx->samples.load()};
          if (const State* st = ctx->live_state.load()) {
            std::tie(p.done, p.total) = st->progress();
            p.state = st;
          }
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
        // A signal to a rank of a job: Open MPI kills the ranks about a second after its SIGTERM, so the
        // case is abandoned at once and rank 0 stores the run before then.
        if (interrupted && several_ranks) break;
      }
    }
    finished = [&] {
      std::lock_guard lock(ctx->mutex);
      return ctx->done;
    }();
    if (finished) {
      worker.join();
    } else {
      worker.detach();  // the context stays alive with the thread; its results are not read
    }
  }

  rec.finished_at = unix_now();
  rec.backend = finished && !ctx->resolved_backend.empty() ? ctx->resolved_backend
                                                            : (backend == "auto" ? "cpu" : backend);
  const WorkloadInfo* info = finished && ctx->info ? &*ctx->info : nullptr;
  if (info) rec.primary_metric = info->primary_metric;
  if (!ready) {
    // rec.status and reason say why the case could not start
  } else if (timed_out && !(finished && ctx->own_error_first && !ctx->comm_failure)) {
    // (a rank that failed and then timed out telling the others keeps its failure)
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
  if (!finished && ready) {
    // Abandoned at its timeout: the items it had added by then (the worker may still add more, unread).
    if (const State* st = ctx->live_state.load()) rec.items = st->items_since(0);
  }
  if (finished) {
    const cuda::CaseGpuRecord gpu = cuda::case_gpu_record(ctx->gpu_before, ctx->gpu_after);
    rec.gpu = gpu.json;
    rec.throttled = gpu.throttled;
    std::error_code ec;
    std::filesystem::remove_all(ctx->work_dir, ec);
  }

  // Agreement: every rank learns every rank's status; the worst wins, the lowest rank among equals.
  const bool by_peer = ready && finished && ctx->peer_stopped, by_comm = ready && finished && ctx->comm_failure;
  Vote mine{static_cast<uint8_t>(severity(rec, by_peer, by_comm)),
            static_cast<uint8_t>(cancel.load() ? 1 : 0), rec.status, rec.reason};
  comm::Communicator& control = *comms.control;
  const int n = control.size();
  std::vector<uint8_t> all(kVoteBytes * static_cast<size_t>(n));
  try {
    // After a signal this rank makes no MPI call: an abandoned case may still have requests in flight,
    // and the job is about to end anyway.
    if (several_ranks && cancel.load()) throw comm::CommError("interrupted");
    control.set_timeout(timeout > 0 ? timeout + 60 : 1e9);  // the slowest rank may still be in its case
    const std::vector<uint8_t> out = encode(mine);
    control.allgather(out.data(), all.data(), kVoteBytes, comm::ElemType::U8);
  } catch (const std::exception& e) {
    result.broken = true;
    result.interrupted = cancel.load();
    if (result.interrupted) {  // a signal cut the agreement short: the case did not fail
      rec.status = "interrupted";
      rec.reason = "interrupted by a signal";
    } else if (rec.status != "interrupted") {
      rec.status = "failed";
      rec.reason = "the ranks could not agree on the case's result: " + std::string(e.what());
    }
    rec.samples.clear();
    rec.summaries.clear();
    return result;
  }
  int worst = 0;
  std::vector<Vote> votes;
  for (int r = 0; r < n; ++r) {
    votes.push_back(decode(&all[kVoteBytes * static_cast<size_t>(r)]));
    if (votes[r].severity > votes[worst].severity) worst = r;
    if (votes[r].interrupted || votes[r].status == "interrupted") result.interrupted = true;
  }
  const Vote& w = votes[worst];
  if (w.severity > mine.severity) {  // another rank's status replaces this one's
    rec.status = w.status;
    rec.reason = (worst != 0 ? "rank " + std::to_string(worst) + ": " : std::string()) + w.reason;
    rec.samples.clear();
    rec.summaries.clear();
  }
  return result;
}

}  // namespace

bool should_stop(const RunnerDefaults& r, int n, double measured_s, double noise) {
  if (n >= r.max_samples) return true;
  if (n >= 1 && measured_s >= r.max_time_s) return true;
  return n >= r.min_samples && measured_s >= r.min_time_s && noise <= r.max_noise;
}

std::string data_key(const WorkloadInfo& info, const Params& params) {
  Params data;
  for (const auto& [axis, value] : params)
    if (const Axis* a = info.find_axis(axis); a && a->data) data.emplace(axis, value);
  return info.name + "/" + params_key(data);
}

uint64_t case_seed(uint64_t run_seed, const std::string& data_key) {
  return splitmix64(run_seed ^ fnv1a64(data_key));
}

std::string resolve_backend(const std::string& requested, const WorkloadInfo& info, const cuda::Probe& gpu) {
  const auto lists = [&](std::string_view b) {
    return std::find(info.backends.begin(), info.backends.end(), b) != info.backends.end();
  };
  const std::string no_gpu = gpu.note.empty() ? std::string("no CUDA device found") : gpu.note;
  if (requested == "auto") {
    if (lists("cuda") && !gpu.gpus.empty()) return "cuda";
    if (lists("cpu")) return "cpu";
    throw SkipCase("workload " + info.name + " has no cpu path and no GPU is usable: " + no_gpu);
  }
  if (!lists(requested)) throw SkipCase("workload " + info.name + " has no " + requested + " path");
  if (requested == "cuda" && gpu.gpus.empty()) throw SkipCase("backend cuda: no usable GPU: " + no_gpu);
  return requested;
}

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
  return run_ranked_case(spec, backend, run_seed, cancel, on_tick, local).rec;
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
  RunOutcome out;
  std::optional<reports::StoreError> store_error;
  if (root) {
    reports::RunRecord run;
    run.suite = plan.suite;
    run.argv = options.argv;
    run.tags = options.tags;
    run.seed = options.seed;
    const GitInfo git = project_git_info();
    run.git_sha = git.sha;
    run.git_dirty = git.dirty;
    run.branch = options.branch.empty() ? git.branch : options.branch;
    run.env = capture_environment();
    run.machine_key = machine_key(run.env);
    run.ci = ci_metadata();
    run.pid = getpid();  // so that a later command can tell this run from one whose process was killed
    run.host = run.env.value("host", "");
    remove_dead_work_dirs();
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
      result = run_ranked_case(spec, options.backend, options.seed, interrupt, [&](const CaseProgress& p) {
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
      }, comms);
    } catch (const comm::CommError& e) {
      result.rec = case_stub(spec, comms);
      result.rec.finished_at = unix_now();
      result.rec.status = interrupt ? "interrupted" : "failed";
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
    if (rec.status == "ok") ++out.ok;
    else if (rec.status == "skipped") ++out.skipped;
    else if (rec.status == "timeout") ++out.timed_out;
    else if (rec.status != "interrupted") ++out.failed;
    interrupted = interrupted || result.interrupted || rec.status == "interrupted" || interrupt;
    broken = broken || result.broken;
  }
  interrupted = interrupted || interrupt;
  out.status = interrupted ? "interrupted" : (out.failed || out.timed_out || broken) ? "failed" : "ok";
  if (root) {
    if (store_error) throw *store_error;  // with_store_retries already marked the run failed
    store->finish_run(out.run_id, out.status);
  }
  return out;
}

}  // namespace mlsb
