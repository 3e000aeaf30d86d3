#include "harness/runner/ranked_case.hpp"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>

#include "backends/cuda/gpu_state.hpp"
#include "harness/registry.hpp"
#include "harness/runner/rank_vote.hpp"
#include "harness/runner/sampling.hpp"
#include "harness/runner/watchdog.hpp"
#include "harness/runner/work_dir.hpp"
#include "util/clock.hpp"
#include "util/text.hpp"

namespace mlsb::runner {
namespace {

using reports::CaseStatus;

// The workload's communicator's timeout per collective (the Communicator default); workloads may change it.
constexpr double kCaseCommTimeout = 60.0;

// "0.05 s", "1200 s": the value as given (a sub-second timeout is not "0 s"), to the millisecond.
std::string format_seconds(double s) { return shortest(std::round(s * 1000) / 1000) + " s"; }

}  // namespace

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

CaseResult run_ranked_case(const CaseSpec& spec, const std::string& backend, uint64_t run_seed,
                           const std::atomic<bool>& cancel, const std::function<void(const CaseProgress&)>& on_tick,
                           RunComms& comms, bool counted) {
  CaseResult result;
  reports::CaseRecord& rec = result.rec;
  rec = case_stub(spec, comms);

  auto exec = std::make_shared<CaseExecution>();
  exec->spec = spec;
  exec->backend = backend;
  exec->counted = counted;
  exec->seed = case_seed(run_seed, data_key(make_workload(spec.workload)->info(), spec.params));
  const double timeout = spec.runner.timeout_s;
  bool ready = false;
  try {
    exec->ctl = comm::duplicate(*comms.control);
    exec->comm = comm::duplicate(comms.cases());
    exec->ctl->set_timeout(timeout > 0 ? timeout + 30 : 1e9);  // a sample may take up to the case timeout
    exec->comm->set_timeout(kCaseCommTimeout);
    exec->ctl->set_cancel_flag(&exec->cancel);
    exec->comm->set_cancel_flag(&exec->cancel);
    exec->work_dir = make_case_work_dir();
    ready = true;
  } catch (const std::exception& e) {
    rec.status = CaseStatus::Failed;
    rec.reason = e.what();
  }

  WatchOutcome watched;
  if (ready) watched = watch_case(exec, timeout, cancel, on_tick, comms.control->size() > 1);
  const bool finished = watched.finished;

  rec.finished_at = unix_now();
  rec.backend =
      finished && !exec->resolved_backend.empty() ? exec->resolved_backend : (backend == "auto" ? "cpu" : backend);
  const WorkloadInfo* info = finished && exec->info ? &*exec->info : nullptr;
  if (info) rec.primary_metric = info->primary_metric;
  if (!ready) {
    // rec.status and reason say why the case could not start
  } else if (watched.timed_out && !(finished && exec->own_error_first && !exec->comm_failure)) {
    // (a rank that failed and then timed out telling the others keeps its failure)
    rec.status = CaseStatus::Timeout;
    rec.reason = "timed out after " + format_seconds(timeout) + (finished ? "" : " (still running; abandoned)");
  } else if (watched.interrupted || exec->status == CaseStatus::Interrupted) {
    rec.status = CaseStatus::Interrupted;
    rec.reason = "interrupted by the user";
  } else {
    rec.status = exec->status;
    rec.reason = exec->reason;
  }
  if (finished && exec->state) {
    for (const auto& w : exec->state->warnings()) rec.reason += (rec.reason.empty() ? "warning: " : "; warning: ") + w;
    for (const auto& n : exec->state->notes()) rec.reason += (rec.reason.empty() ? "note: " : "; note: ") + n;
    rec.items = std::move(exec->state->items());
    const bool stopped = rec.status == CaseStatus::Interrupted || rec.status == CaseStatus::Timeout;
    if (rec.status == CaseStatus::Ok) {
      rec.samples = exec->state->samples();
    } else if (stopped && exec->samples > 0) {
      // A case stopped between samples keeps the ones it finished (a sample cut short may have recorded a
      // part: the values past the finished count are dropped).
      const auto done = static_cast<size_t>(exec->samples.load());
      for (const auto& [metric, values] : exec->state->samples())
        rec.samples[metric].assign(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(std::min(done, values.size())));
      rec.reason += "; kept the " + std::to_string(done) + (done == 1 ? " sample" : " samples") + " it finished";
    }
    for (const auto& [metric, values] : rec.samples) {
      const Metric* m = info->find_metric(metric);
      rec.summaries.push_back({metric, m->unit, m->better, summarize(values, exec->seed), m->deterministic});
    }
  }
  if (!finished && ready) {
    // Abandoned at its timeout: the items it had added by then (the worker may still add more, unread).
    if (const State* st = exec->live_state.load()) rec.items = st->items_since(0);
  }
  if (finished) {
    const cuda::CaseGpuRecord gpu = cuda::case_gpu_record(exec->gpu_before, exec->gpu_after, exec->gpu_during);
    rec.gpu = gpu.json;
    rec.throttled = gpu.throttled;
    std::error_code ec;
    std::filesystem::remove_all(exec->work_dir, ec);
  }

  const RankCase rank{ready && finished && exec->peer_stopped, ready && finished && exec->comm_failure};
  const VoteOutcome vote = vote_on_case(rec, rank, cancel, *comms.control, timeout);
  result.interrupted = vote.interrupted;
  result.broken = vote.broken;
  return result;
}

}  // namespace mlsb::runner
