// moe_train.block: one transformer block (attention + MoE FFN) whose attention and MoE parts use different
// parallel groups of the same ranks (MoE Parallel Folding, fold/), forward, backward and the gradient reductions,
// measured per group on the run's ranks and, optionally, a modelled cluster; checked against the one-rank block.
#include <algorithm>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>

#include "backends/comm/communicator.hpp"
#include "harness/axes.hpp"
#include "harness/registry.hpp"
#include "util/clock.hpp"
#include "workloads/moe_train/case_config.hpp"
#include "workloads/moe_train/cpu_peak.hpp"
#include "workloads/moe_train/family.hpp"
#include "workloads/moe_train/flops.hpp"
#include "workloads/moe_train/fold/block.hpp"
#include "workloads/moe_train/fold/block_check.hpp"
#include "workloads/moe_train/fold/block_metrics.hpp"
#include "workloads/moe_train/fold/fold_axes.hpp"
#include "workloads/moe_train/fold/gpu_block.hpp"
#include "workloads/moe_train/fold/mapping_run.hpp"
#include "workloads/moe_train/fold/traffic_model.hpp"

namespace mlsb::moe_train {
namespace {

using fold::Group;

// The parallel sizes of a case (without the rank count).
struct Sizes {
  int tp = 1, cp = 1, etp = 1, ep = 1;
  std::string order;
};

Sizes read_sizes(const State& s) {
  return {static_cast<int>(s.get_int("tp")), static_cast<int>(s.get_int("cp")), static_cast<int>(s.get_int("etp")),
          static_cast<int>(s.get_int("ep")), s.get_string("order")};
}

class BlockBench final : public Workload {
 public:
  WorkloadInfo info() const override {
    WorkloadInfo w;
    w.name = "moe_train.block";
    w.description =
        "One transformer block (RMSNorm, causal attention with TP/SP/CP, MoE FFN with the all-to-all dispatcher over "
        "ETP x EP) with MoE Parallel Folding: attention and experts on different groups of the same ranks; per-group "
        "collective time and bytes, cross-node bytes on a modelled cluster, MFU; checked against the one-rank block.";
    w.axes = fold::block_shape_axes();
    for (auto& a : std::vector<Axis>{
        int_axis("tp", {1}, "attention tensor parallel size (with sequence parallelism)", 1, 4096),
        int_axis("cp", {1}, "context parallel size (each sequence in cp contiguous chunks)", 1, 4096),
        int_axis("etp", {1}, "expert tensor parallel size (fc1 by columns, fc2 by rows)", 1, 4096),
        int_axis("ep", {1}, "expert parallel size", 1, 4096),
        string_axis("order", {std::string(fold::kDefaultOrder)},
                    "rank order of the parallel dimensions, fastest first (Megatron's RankGenerator)")})
      w.axes.push_back(std::move(a));
    for (auto& a : fold::cluster_axes()) w.axes.push_back(std::move(a));
    w.axes.push_back(int_axis("threads", {1}, "cpu: OpenBLAS and element-wise threads (cuda: unused)", 1, 1024));
    w.metrics = fold::block_metrics();
    w.primary_metric = "step_ms";
    // Under mpirun (mpirun -n 8 mlsysbench ...): on one rank a mapping of several ranks skips, naming the rule.
    w.examples = {
        "run moe_train.block -p tp=2 -p etp=1,2 -p ep=2,4,8",
        "run moe_train.block -p tp=2 -p ep=4 -p ranks_per_node=4 -p inter_gbps=1",
        "run moe_train.block -p etp=2 -p ep=4 -p dispatcher=alltoall,allgather",
        "run moe_train.block -p cp=2 -p ep=4 --dry-run",
    };
    w.runner = {.warmup = kLayerWarmupSteps,
                .min_samples = 5,
                .max_samples = 30,
                .min_time_s = 0.5,
                .max_noise = 0.03,
                .max_time_s = 20,
                .timeout_s = 1200};
    w.backends = {"cpu", "cuda"};
    return w;
  }
  std::string memory_hint(const State&) const override { return "lower batch, seq or hidden"; }

  void check(const Params& p) const override {
    const WorkloadInfo wi = info();
    const State s(wi, p, 0, {});
    const Sizes z = read_sizes(s);
    fold::check_sizes(fold::read_block(s), z.tp, z.cp, z.etp, z.ep, z.order);
  }

  std::string describe(const Params& p) const override {
    const WorkloadInfo wi = info();
    const State s(wi, p, 0, {});
    const Sizes z = read_sizes(s);
    const int world = comm::launcher_world_size();
    const fold::Mapping m = fold::make_mapping(world, z.tp, z.cp, z.etp, z.ep, 1, z.order);
    fold::validate(fold::read_block(s), m);
    fold::read_cluster(s, world);
    return "on " + std::to_string(world) + " rank(s): " + m.label() + (m.legacy() ? " (legacy)" : " (folded)") +
           "\n" + fold::make_groups(m).describe();
  }

  void setup(State& state) override {
    const bool gpu = state.backend() == "cuda";
    // On cuda the block's tensors travel on the case's communicator (nccl: device buffers); metrics and checks go
    // over its host side.
    comm::Communicator& wire = gpu ? state.comm() : cpu_comm(state);
    comm_ = &wire.host_side();
    const int world = comm_->size();
    try {
      block_config_ = fold::read_block(state);
      const Sizes z = read_sizes(state);
      mapping_ = fold::make_mapping(world, z.tp, z.cp, z.etp, z.ep, 1, z.order);
      if (gpu)
        fold::check_gpu_block(block_config_, mapping_);
      else
        fold::validate(block_config_, mapping_);
      cluster_ = fold::read_cluster(state, world);
    } catch (const std::invalid_argument& e) {
      state.skip(std::string(e.what()) + (world == 1 ? " (one rank: run under mpirun)" : ""));
    }
    threads_ = static_cast<int>(state.get_int("threads"));
    weights_ = fold::init_block(block_config_, state.seed());
    data_ = fold::block_data(block_config_, state.seed());
    if (gpu) {
      std::string failed;
      try {
        run_ = std::make_unique<fold::MappingRun>(wire, block_config_, mapping_, cluster_, weights_, data_, 1, true);
      } catch (const std::runtime_error& e) {
        failed = e.what();
      }
      // One rank without a usable GPU skips the case on every rank instead of leaving the others waiting.
      state.skip_unless_every_rank(failed.empty() ? "" : "backend cuda: " + failed);
      state.warn("the cuda block computes in fp32 (cuBLAS without TF32): no mfu (the GPU peaks are bf16)");
    } else {
      run_ = std::make_unique<fold::MappingRun>(wire, block_config_, mapping_, cluster_, weights_, data_, threads_);
      const auto own = static_cast<int64_t>(run_->shard().own_tokens().size());
      if (!state.counting()) cpu_peak_ = CpuPeak(threads_, expert_gemm_shapes(block_config_.moe, own, world), false);
    }
    const fold::Groups& groups = run_->groups();
    state.add_item("mapping", fold::mapping_json(mapping_, groups));
    // What the traffic model predicts for rank 0 (balanced, dropless routing), beside the counted metrics.
    const fold::PredictedTraffic predicted = fold::predict_traffic(block_config_, mapping_, groups, cluster_, 0, 4);
    nlohmann::json pt = {{"cross_node_bytes", predicted.cross_node_bytes},
                         {"comm_ms", predicted.total_seconds() * 1e3}};
    for (const auto& [g, stem] : fold::kReportedGroups) pt[std::string(stem) + "_bytes"] = predicted.bytes[static_cast<size_t>(g)];
    state.add_item("predicted_traffic", pt);
    if (world == 1) state.warn("one rank: nothing is communicated (run under mpirun)");
  }

  void sample(State& state) override {
    const double step_s = run_->step();
    fold::record_block_step(state, *comm_, block_config_, mapping_, run_->times(), run_->plan().dropped,
                            run_->comms(), step_s, run_->gpu_block() ? nullptr : &cpu_peak_);
  }

  void verify(State& state) override {
    const fold::BlockCheck check =
        fold::check_block(block_config_, mapping_, run_->groups(), weights_, data_, run_->shard(), run_->grads(),
                          run_->plan(), run_->y(), run_->dx());
    // Agreed over ranks so that all fail together.
    const double worst = comm_->max_over_ranks(check.worst_rel_err);
    const double drops_differ = comm_->max_over_ranks(check.drops_differ ? 1.0 : 0.0);
    state.add_item("check", {{"max_rel_err", worst}, {"tolerance", fold::kBlockRelTolerance}, {"worst", check.worst_what}});
    if (drops_differ > 0) state.fail("capacity dropped other assignments than the one-rank reference drops per rank");
    if (!(worst <= fold::kBlockRelTolerance))
      state.fail("the folded block differs from the one-rank block: relative L2 " + std::to_string(worst) +
                 " (" + check.worst_what + " on some rank) > " + std::to_string(fold::kBlockRelTolerance));
  }

  void teardown(State&) override { run_.reset(); }

 private:
  comm::Communicator* comm_ = nullptr;
  fold::BlockConfig block_config_;
  fold::Mapping mapping_;
  fold::Cluster cluster_;
  std::unique_ptr<fold::MappingRun> run_;
  fold::BlockWeights weights_;
  fold::BlockData data_;
  int threads_ = 1;
  CpuPeak cpu_peak_;
};

}  // namespace

MLSB_REGISTER_WORKLOAD(BlockBench);

}  // namespace mlsb::moe_train
