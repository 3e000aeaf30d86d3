#include "harness/runner/sampling.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <new>

#include "backends/cuda/probe.hpp"
#include "harness/registry.hpp"
#include "harness/callgrind.hpp"
#include "harness/runner.hpp"
#include "util/clock.hpp"
#include "util/text.hpp"

namespace mlsb {
namespace runner {
namespace {

struct Cancelled {};
// The runner's vote stopped the case on this rank: another rank failed or skipped (agree() got kAbort, so this
// rank has voted already).
struct PeerStopped : StoppedByPeer {};

// What the ranks agree on after every step of a case (allreduce max over the case's control comm).
constexpr int32_t kGo = 0, kStop = 1, kAbort = 2;

const cuda::Probe& gpu_probe() {
  static const cuda::Probe probe = cuda::probe();
  return probe;
}

// The state of the GPUs this process sees (CUDA's devices, CUDA_VISIBLE_DEVICES honoured); none, at no
// cost, without a GPU or NVML.
const std::vector<std::string>& visible_bus_ids() {
  static const std::vector<std::string> bus_ids = [] {
    std::vector<std::string> ids;
    for (const auto& g : gpu_probe().gpus) ids.push_back(g.pci_bus_id);
    return ids;
  }();
  return bus_ids;
}
std::vector<cuda::GpuState> read_visible_gpus() { return cuda::read_gpu_states(visible_bus_ids()); }

}  // namespace

// Every rank passes its code; all get the largest. kAbort from another rank stops this one.
int32_t CaseExecution::agree(int32_t mine) {
  int32_t v = mine;
  ctl->allreduce(&v, &v, 1, comm::ElemType::I32, comm::ReduceOp::Max);
  if (v >= kAbort && mine < kAbort) throw PeerStopped{};
  return v;
}

void CaseExecution::run_samples(Workload& w) {
  State& st = *state;
  const RunnerDefaults& rules = spec.runner;
  double warm_call_s = INFINITY;  // the last warm-up call's time: it sizes the batch
  for (int i = 0; i < rules.warmup; ++i) {
    if (cancel) throw Cancelled{};
    st.begin_sample(-1 - i, true);
    const auto t0 = Clock::now();
    w.sample(st);
    warm_call_s = seconds_since(t0);
    if (between_samples) between_samples();
  }
  const int calls = batch_calls(rules.min_sample_s, warm_call_s, ctl->size() == 1 && !counted);
  if (calls > 1) {
    char took[32];
    std::snprintf(took, sizeof took, "%.3g", warm_call_s * 1e3);
    st.note("each sample is the mean of " + std::to_string(calls) + " calls (one took " + took +
            " ms; a sample lasts at least " + shortest(rules.min_sample_s * 1e3) + " ms)");
  }
  // A counted case with the extra-work knob: one more (counted, unrecorded) warm-up sizes the extra work.
  double extra = 0;
  if (counted && extra_work_for(1) > 0) {
    st.begin_sample(-1 - rules.warmup, true);
    CountedSample probe;
    probe.begin();
    w.sample(st);
    if (const auto t = probe.end()) extra = extra_work_for(static_cast<double>(t->ir));
  }
  CountedSample counter(extra);
  double measured = 0;
  int n = 0;
  double noise = INFINITY;
  const bool read_gpus = ctl->rank() == 0;  // the rank that stores the case reads the GPUs it sees
  if (read_gpus) gpu_before = read_visible_gpus();
  // While the timed samples run, the GPUs are read every 100 ms (before and after, they idle).
  std::optional<cuda::GpuWatch> watch;
  if (!gpu_before.empty()) watch.emplace(visible_bus_ids());
  // The ranks start the first timed sample together: otherwise what rank 0 alone did since the warm-up (the
  // read above) is time its peers spend waiting in the sample's first collective.
  agree(kGo);
  while (true) {
    if (cancel) throw Cancelled{};
    st.begin_sample(n, false, calls);
    if (n == 0 && calls > 1) st.add_item("batch", {{"calls_per_sample", calls}, {"min_sample_s", rules.min_sample_s}});
    const auto t0 = Clock::now();
    if (counted) counter.begin();
    for (int call = 0; call < calls && !cancel; ++call) {
      if (call > 0) st.next_call();
      w.sample(st);
    }
    if (calls > 1) st.end_sample();
    if (counted) {
      const auto totals = counter.end();
      if (!totals) st.fail("--measure instructions: this process is not running under callgrind");
      const std::vector<double> values = counted_values(*totals);
      for (size_t i = 0; i < values.size(); ++i) st.record(counted_metrics()[i].name, values[i]);
    }
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
    if (between_samples) between_samples();
  }
  if (watch) gpu_during = watch->stop();
  if (read_gpus) gpu_after = read_visible_gpus();
  syncing_ = false;
  if (n >= 2 && noise > rules.max_noise) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "noisy: relative stddev of %s is %.2f%% after %d samples (bound %.2f%%)",
                  info->primary_metric.c_str(), noise * 100, n, rules.max_noise * 100);
    reason = buf;
  }
}

// Setup, samples and verify; a rank whose step throws tells the others (kAbort) before rethrowing,
// so they stop at their next agreement instead of waiting for it.
void CaseExecution::run_steps() {
  try {
    auto workload = make_workload(spec.workload);
    info = workload->info();
    std::vector<std::string> counted_names;
    if (counted) {  // the instrument's metrics replace the workload's own; instructions is the primary
      if (!info->countable)
        throw SkipCase("--measure instructions: " + info->name +
                       " runs its work in other processes (MCP servers), which callgrind does not count");
      if (ctl->size() > 1) throw SkipCase("--measure instructions counts one process: not under MPI ranks > 1");
      for (const Metric& m : counted_metrics()) {
        info->metrics.push_back(m);
        counted_names.push_back(m.name);
      }
      info->primary_metric = "instructions";
    }
    state = std::make_unique<State>(*info, spec.params, seed, work_dir);
    if (counted) state->keep_only(counted_names);
    state->set_cancel_flag(&cancel);
    state->set_comm(comm.get());
    live_state = state.get();
    resolved_backend = resolve_backend(backend, *info, gpu_probe());
    if (counted && resolved_backend != "cpu")
      throw SkipCase("--measure instructions counts CPU work; the " + resolved_backend + " backend is timed on the device");
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
  } catch (...) {  // the workload's own failure, or its StoppedByPeer (State::skip_unless_every_rank)
    own_error_first = !cancel;
    if (syncing_ && !cancel) {
      try {
        agree(kAbort);
      } catch (...) {
      }
    }
    throw;
  }
}

void CaseExecution::run() {
  using reports::CaseStatus;
  try {
    run_steps();
  } catch (const Cancelled&) {
    status = CaseStatus::Interrupted;
  } catch (const StoppedByPeer&) {
    status = CaseStatus::Failed;
    peer_stopped = true;
    reason = "stopped because another rank failed";
  } catch (const SkipCase& e) {
    status = CaseStatus::Skipped;
    reason = e.what();
  } catch (const FailCase& e) {
    status = CaseStatus::Failed;
    reason = e.what();
  } catch (const comm::CommError& e) {
    status = CaseStatus::Failed;
    comm_failure = true;
    reason = std::string("error: ") + e.what();
  } catch (const std::exception& e) {
    status = CaseStatus::Failed;
    reason = std::string("error: ") + e.what();
  } catch (...) {
    status = CaseStatus::Failed;
    reason = "error: unknown exception";
  }
  std::lock_guard lock(mutex);
  done = true;
  cv.notify_all();
}

}  // namespace runner

bool should_stop(const RunnerDefaults& r, int n, double measured_s, double noise) {
  if (n >= r.max_samples) return true;
  if (n >= 1 && measured_s >= r.max_time_s) return true;
  return n >= r.min_samples && measured_s >= r.min_time_s && noise <= r.max_noise;
}

int batch_calls(double min_sample_s, double call_s, bool allowed) {
  if (!allowed || !(min_sample_s > 0) || !(call_s < min_sample_s)) return 1;
  const double calls = std::ceil(min_sample_s / std::max(call_s, 1e-9));
  return static_cast<int>(std::min(calls, static_cast<double>(kMaxBatch)));
}

std::string data_key(const WorkloadInfo& info, const Params& params) {
  Params data;
  for (const auto& [axis, value] : params)
    if (const Axis* a = info.find_axis(axis); a && a->data) data.emplace(axis, value);
  return info.name + "/" + params_key(data);
}

uint64_t case_seed(uint64_t run_seed, const std::string& data_key) { return splitmix64(run_seed ^ fnv1a64(data_key)); }

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

}  // namespace mlsb
