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
#include "workloads/moe_train/fold/traffic_model.hpp"

namespace mlsb::moe_train {
namespace {

using fold::Group;

// The block's shape, routing and parallel sizes from a case's axes (without the rank count).
struct BlockCase {
  fold::BlockConfig block;
  int tp = 1, cp = 1, etp = 1, ep = 1;
  std::string order;
  int ranks_per_node = 0;
  double intra_gbps = 0, intra_latency_us = 0, inter_gbps = 0, inter_latency_us = 0;
};

// Throws std::invalid_argument naming the axis for what no rank count can fix.
BlockCase read_case(const State& s) {
  BlockCase c;
  MoeConfig& m = c.block.moe;
  m.hidden = s.get_int("hidden"), m.ffn = s.get_int("ffn"), m.experts = s.get_int("experts");
  m.topk = s.get_int("topk");
  m.router = parse_router(s.get_string("router"));
  m.capacity_factor = s.get_float("capacity_factor");
  m.drop = parse_drop_policy(s.get_string("drop_policy"));
  m.aux_coef = 0, m.z_coef = 0, m.bias_rate = 0;
  c.block.heads = s.get_int("heads"), c.block.seq = s.get_int("seq"), c.block.batch = s.get_int("batch");
  c.tp = static_cast<int>(s.get_int("tp")), c.cp = static_cast<int>(s.get_int("cp"));
  c.etp = static_cast<int>(s.get_int("etp")), c.ep = static_cast<int>(s.get_int("ep"));
  c.order = s.get_string("order");
  c.ranks_per_node = static_cast<int>(s.get_int("ranks_per_node"));
  c.intra_gbps = s.get_float("intra_gbps"), c.intra_latency_us = s.get_float("intra_latency_us");
  c.inter_gbps = s.get_float("inter_gbps"), c.inter_latency_us = s.get_float("inter_latency_us");
  fold::validate(c.block);
  // The order's names and the model's divisibility do not depend on the ranks: check them with dp = edp = 1.
  fold::RankGenerator(c.tp, c.cp, 1, 1, 1, c.order);
  fold::RankGenerator(c.etp, 1, c.ep, 1, 1, c.order);
  fold::Mapping sizes;
  sizes.tp = c.tp, sizes.cp = c.cp, sizes.etp = c.etp, sizes.ep = c.ep;
  fold::check_model(sizes, m.experts, m.ffn, c.block.heads, c.block.seq);
  return c;
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
    w.axes = {
        data_axis(int_axis("hidden", {128}, "model width h", 1, 1 << 20)),
        data_axis(int_axis("ffn", {256}, "routed expert SwiGLU inner size f", 1, 1 << 22)),
        data_axis(int_axis("experts", {8}, "routed experts E", 1, 65536)),
        int_axis("topk", {2}, "experts per token k", 1, 65536),
        string_axis("router", {"topk_softmax"}, "topk_softmax (Megatron default), softmax_topk, sigmoid",
                    {"topk_softmax", "softmax_topk", "sigmoid"}),
        float_axis("capacity_factor", {0.0},
                   "capacity = ceil(own tokens*k/E*cf) per expert, decided per rank from its own tokens; 0 = dropless",
                   0, 1e6),
        string_axis("drop_policy", {"probs"}, "over capacity keep the highest weights or the first tokens",
                    {"probs", "position"}),
        data_axis(int_axis("heads", {4}, "attention heads", 1, 65536)),
        data_axis(int_axis("seq", {128}, "positions per sequence", 1, 1 << 20)),
        data_axis(int_axis("batch", {8}, "sequences per step, all ranks together", 1, 1 << 20)),
        int_axis("tp", {1}, "attention tensor parallel size (with sequence parallelism)", 1, 4096),
        int_axis("cp", {1}, "context parallel size (each sequence in cp contiguous chunks)", 1, 4096),
        int_axis("etp", {1}, "expert tensor parallel size (fc1 by columns, fc2 by rows)", 1, 4096),
        int_axis("ep", {1}, "expert parallel size", 1, 4096),
        string_axis("order", {std::string(fold::kDefaultOrder)},
                    "rank order of the parallel dimensions, fastest first (Megatron's RankGenerator)"),
        int_axis("ranks_per_node", {0}, "modelled cluster: consecutive ranks per node (0 = one node)", 0, 1 << 20),
        float_axis("intra_gbps", {0.0}, "modelled link inside a node, GB/s per rank (0 = the real transport alone)", 0,
                   1e6),
        float_axis("intra_latency_us", {0.0}, "modelled link inside a node: latency per message, microseconds", 0, 1e9),
        float_axis("inter_gbps", {0.0}, "modelled link between nodes, GB/s per rank (0 = the real transport alone)", 0,
                   1e6),
        float_axis("inter_latency_us", {0.0}, "modelled link between nodes: latency per message, microseconds", 0,
                   1e9),
        int_axis("threads", {1}, "cpu: OpenBLAS and element-wise threads", 1, 1024),
    };
    w.metrics = fold::block_metrics();
    w.primary_metric = "step_ms";
    w.examples = {
        "mpirun -n 8 mlsysbench run moe_train.block -p tp=2 -p etp=1,2 -p ep=2,4,8",
        "mpirun -n 8 mlsysbench run moe_train.block -p tp=2 -p ep=4 -p ranks_per_node=4 -p inter_gbps=1",
        "mpirun -n 4 mlsysbench run moe_train.block -p cp=2 -p ep=4 --dry-run",
    };
    w.runner = {.warmup = kLayerWarmupSteps,
                .min_samples = 5,
                .max_samples = 30,
                .min_time_s = 0.5,
                .max_noise = 0.03,
                .max_time_s = 20,
                .timeout_s = 1200};
    w.backends = {"cpu"};
    return w;
  }
  std::string memory_hint(const State&) const override { return "lower batch, seq or hidden"; }

  void check(const Params& p) const override {
    const WorkloadInfo wi = info();
    read_case(State(wi, p, 0, {}));
  }

  std::string describe(const Params& p) const override {
    const WorkloadInfo wi = info();
    const BlockCase c = read_case(State(wi, p, 0, {}));
    const int world = comm::launcher_world_size();
    const fold::Mapping m = fold::make_mapping(world, c.tp, c.cp, c.etp, c.ep, 1, c.order);
    fold::validate(c.block, m);
    fold::make_cluster(world, c.ranks_per_node, c.intra_gbps, c.intra_latency_us, c.inter_gbps, c.inter_latency_us);
    return "on " + std::to_string(world) + " rank(s): " + m.label() + (m.legacy() ? " (legacy)" : " (folded)") +
           "\n" + fold::make_groups(m).describe();
  }

  void setup(State& state) override {
    comm_ = &cpu_comm(state);
    const int world = comm_->size();
    try {
      case_ = read_case(state);
      mapping_ = fold::make_mapping(world, case_.tp, case_.cp, case_.etp, case_.ep, 1, case_.order);
      fold::validate(case_.block, mapping_);
      cluster_ = fold::make_cluster(world, case_.ranks_per_node, case_.intra_gbps, case_.intra_latency_us,
                                    case_.inter_gbps, case_.inter_latency_us);
    } catch (const std::invalid_argument& e) {
      state.skip(e.what());
    }
    threads_ = static_cast<int>(state.get_int("threads"));
    groups_ = fold::make_groups(mapping_);
    comms_ = fold::make_rank_comms(*comm_, groups_, cluster_);
    block_ = std::make_unique<fold::FoldedBlock>(case_.block, mapping_, groups_, *comms_, comm_->rank(), threads_);
    weights_ = fold::init_block(case_.block, state.seed());
    block_->load(weights_);
    data_ = fold::block_data(case_.block, state.seed());
    const int64_t h = case_.block.moe.hidden;
    const auto& own = block_->own_tokens();
    x_.resize(own.size() * h), dy_.resize(own.size() * h), y_.resize(x_.size()), dx_.resize(x_.size());
    for (size_t t = 0; t < own.size(); ++t) {
      std::copy_n(data_.x.begin() + own[t] * h, h, x_.begin() + t * h);
      std::copy_n(data_.dy.begin() + own[t] * h, h, dy_.begin() + t * h);
    }
    if (!state.counting())
      cpu_peak_ = CpuPeak(threads_, expert_gemm_shapes(case_.block.moe, static_cast<int64_t>(own.size()), world),
                          false);
    state.add_item("mapping", fold::mapping_json(mapping_, groups_));
    // What the traffic model predicts for rank 0 (balanced, dropless routing), beside the counted metrics.
    const fold::PredictedTraffic predicted = fold::predict_traffic(case_.block, mapping_, groups_, cluster_, 0, 4);
    nlohmann::json pt = {{"cross_node_bytes", predicted.cross_node_bytes},
                         {"comm_ms", predicted.total_seconds() * 1e3}};
    for (const auto& [g, stem] : fold::kReportedGroups) pt[std::string(stem) + "_bytes"] = predicted.bytes[static_cast<size_t>(g)];
    state.add_item("predicted_traffic", pt);
    if (world == 1) state.warn("one rank: nothing is communicated (run under mpirun)");
  }

  void sample(State& state) override {
    block_->zero_grad();
    block_->times().clear();
    comms_->clear_traffic();
    const auto t0 = Clock::now();
    block_->forward(x_.data(), y_.data());
    block_->backward(dy_.data(), dx_.data());
    const double step_s = seconds_since(t0);
    fold::record_block_step(state, *comm_, case_.block, mapping_, *block_, *comms_, step_s, cpu_peak_);
  }

  void verify(State& state) override {
    const fold::BlockCheck check = fold::check_block(case_.block, mapping_, groups_, weights_, data_, *block_, y_, dx_);
    // Agreed over ranks so that all fail together.
    const double worst = comm_->max_over_ranks(check.worst_rel_err);
    const double drops_differ = comm_->max_over_ranks(check.drops_differ ? 1.0 : 0.0);
    state.add_item("check", {{"max_rel_err", worst}, {"tolerance", fold::kBlockRelTolerance}, {"worst", check.worst_what}});
    if (drops_differ > 0) state.fail("capacity dropped other assignments than the one-rank reference drops per rank");
    if (!(worst <= fold::kBlockRelTolerance))
      state.fail("the folded block differs from the one-rank block: relative L2 " + std::to_string(worst) +
                 " (" + check.worst_what + " on some rank) > " + std::to_string(fold::kBlockRelTolerance));
  }

  void teardown(State&) override {
    block_.reset();
    comms_.reset();
  }

 private:
  comm::Communicator* comm_ = nullptr;
  BlockCase case_;
  fold::Mapping mapping_;
  fold::Groups groups_;
  fold::Cluster cluster_;
  std::unique_ptr<fold::RankComms> comms_;
  std::unique_ptr<fold::FoldedBlock> block_;
  fold::BlockWeights weights_;
  fold::BlockData data_;
  std::vector<float> x_, dy_, y_, dx_;
  int threads_ = 1;
  CpuPeak cpu_peak_;
};

}  // namespace

MLSB_REGISTER_WORKLOAD(BlockBench);

}  // namespace mlsb::moe_train
