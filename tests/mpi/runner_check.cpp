// runner_check DB [normal|die]: run_plan on the ranks of mpirun with workloads that misbehave on one
// rank; rank 0 writes DB, which tests/integration/mpi inspects.
//   normal  cases: ok (rank-dependent noise), fail on rank 2, skip on rank 1, hang on rank 1 (timeout),
//           ok again, a setup that fails on rank 3 before a collective (skipped on every rank at once), and a
//           cuda request for a cpu-only workload (skipped)
//   die     cases: ok, then rank 1 exits in its first sample (mpirun ends the job; rank 0 gets SIGTERM)
// Exit status: rank 0's (0 when the run's status is as expected for the plan: failed for normal).
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <optional>
#include <string>
#include <thread>

#include "backends/comm/communicator.hpp"
#include "harness/progress.hpp"
#include "harness/registry.hpp"
#include "harness/runner.hpp"
#include "reports/store.hpp"

namespace mlsb {
namespace {

std::atomic<bool> g_interrupt{false};
void on_signal(int) { g_interrupt = true; }

// mpi_probe: each sample sums the ranks over State::comm() and records a value whose noise depends on
// the rank (rank 0 quiet, others noisy), so only a shared stopping decision keeps the ranks together.
// `act` makes one rank (`on`) misbehave: fail (in sample 1), skip (setup), leave (its setup fails before a
// collective the others then enter: State::skip_unless_every_rank stops them), hang (sleeps 8 s ignoring
// cancellation), die (_exit(3)).
class MpiProbe : public Workload {
 public:
  WorkloadInfo info() const override {
    WorkloadInfo i;
    i.name = "mpi_probe";
    i.description = "runner test under MPI";
    i.axes = {{"act", AxisType::String, {std::string("none")}, "misbehaviour", {"none", "fail", "skip", "leave", "hang", "die"}},
              {"on", AxisType::Int, {int64_t{1}}, "rank that misbehaves", {}, 0, 64}};
    i.metrics = {{"value", "ms", Better::Lower, "a value"}};
    i.primary_metric = "value";
    i.runner.warmup = 1;
    i.runner.min_samples = 3;
    i.runner.max_samples = 12;
    i.runner.min_time_s = 0;
    i.runner.max_noise = 0.05;
    i.runner.timeout_s = 20;
    return i;
  }
  void setup(State& s) override {
    if (mine(s) && s.get_string("act") == "skip") s.skip("no widget on this rank");
    if (s.get_string("act") == "leave") {
      s.skip_unless_every_rank(mine(s) ? "no device memory on this rank" : "");
      int64_t ready = 1;  // what a rank's setup may need from the others (a layout, a GPU count)
      s.comm().allreduce(&ready, &ready, 1, comm::ElemType::I64, comm::ReduceOp::Sum);
    }
  }
  void sample(State& s) override {
    const std::string act = s.get_string("act");
    if (mine(s) && act == "die") _exit(3);
    if (mine(s) && act == "fail" && s.sample_index() == 1) s.fail("checksum 7 != 8");
    if (mine(s) && act == "hang" && s.sample_index() == 0) std::this_thread::sleep_for(std::chrono::seconds(8));
    int64_t sum = s.comm().rank();
    s.comm().allreduce(&sum, &sum, 1, comm::ElemType::I64, comm::ReduceOp::Sum);
    const int64_t n = s.comm().size();
    if (sum != n * (n - 1) / 2) s.fail("rank sum " + std::to_string(sum));
    ++taken_;
    const double noise = s.comm().rank() == 0 ? 0.0 : (taken_ % 2 ? 0.5 : -0.5);
    s.record("value", 10.0 + noise);
  }
  void verify(State& s) override {
    // Every rank must have taken the same number of samples.
    int64_t lo = taken_, hi = taken_;
    s.comm().allreduce(&lo, &lo, 1, comm::ElemType::I64, comm::ReduceOp::Min);
    s.comm().allreduce(&hi, &hi, 1, comm::ElemType::I64, comm::ReduceOp::Max);
    if (lo != hi) s.fail("ranks took " + std::to_string(lo) + ".." + std::to_string(hi) + " samples");
  }

 private:
  static bool mine(const State& s) { return s.comm().rank() == s.get_int("on"); }
  int64_t taken_ = 0;
};
MLSB_REGISTER_WORKLOAD(MpiProbe);

CaseSpec probe_case(const std::string& act, int64_t on) {
  CaseSpec c;
  c.workload = "mpi_probe";
  c.params = {{"act", act}, {"on", on}};
  c.runner = MpiProbe().info().runner;
  c.label = "act=" + act + ",on=" + std::to_string(on);
  if (act == "hang") c.runner.timeout_s = 1.5;  // rank 1 is abandoned 5 s later, the others stop at once
  if (act == "fail") c.runner.timeout_s = 4;    // the others wait for rank 2 in an allreduce until then
  return c;
}

}  // namespace
}  // namespace mlsb

int main(int argc, char** argv) {
  using namespace mlsb;
  if (argc < 2) {
    std::fprintf(stderr, "usage: runner_check DB [normal|die] [backend]\n");
    return 2;
  }
  const std::string mode = argc > 2 ? argv[2] : "normal";
  Plan plan;
  plan.suite = "runner_check";
  if (mode == "die") {
    plan.cases = {probe_case("none", 1), probe_case("die", 1), probe_case("none", 1)};
  } else {
    plan.cases = {probe_case("none", 1), probe_case("fail", 2), probe_case("skip", 1),
                  probe_case("hang", 1), probe_case("none", 1), probe_case("leave", 3)};
  }
  RunComms comms = RunComms::create("mpi");
  for (int sig : {SIGINT, SIGTERM}) std::signal(sig, on_signal);
  const bool root = comms.rank() == 0;
  std::optional<reports::Store> store;
  std::optional<Progress> progress;
  if (root) {
    store.emplace(argv[1]);
    std::vector<PlannedCase> planned;
    for (const auto& c : plan.cases) planned.push_back({c.workload});
    progress.emplace(stderr, false, std::move(planned));
  }
  RunOptions opts;
  opts.argv = "runner_check";
  opts.backend = "cpu";
  RunOutcome out = run_plan(plan, opts, store ? &*store : nullptr, progress ? &*progress : nullptr, g_interrupt, comms);
  if (mode == "normal") {  // and a cuda request: every case skipped on every rank
    Plan one;
    one.suite = "runner_check_cuda";
    one.cases = {probe_case("none", 1)};
    opts.backend = "cuda";
    const RunOutcome cuda = run_plan(one, opts, store ? &*store : nullptr, nullptr, g_interrupt, comms);
    std::printf("rank %d: run %s (%d ok, %d failed, %d timed out, %d skipped); cuda run %s (%d skipped)\n",
                comms.rank(), reports::status_name(out.status).c_str(), out.ok, out.failed, out.timed_out, out.skipped,
                reports::status_name(cuda.status).c_str(), cuda.skipped);
  } else {
    std::printf("rank %d: run %s\n", comms.rank(), reports::status_name(out.status).c_str());
  }
  std::fflush(stdout);
  return 0;
}
