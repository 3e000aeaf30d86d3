#include "workloads/moe_train/fold/block_metrics.hpp"

#include <algorithm>
#include <string>

#include "harness/axes.hpp"
#include "workloads/moe_train/family.hpp"
#include "workloads/moe_train/flops.hpp"

namespace mlsb::moe_train::fold {

std::vector<Metric> block_metrics() {
  std::vector<Metric> m = {
      {"step_ms", "ms", Better::Lower, "forward + backward + the gradient reductions (no optimizer step), max over ranks"}};
  for (auto& x : family_metrics({"forward_ms", "backward_ms"})) m.push_back(std::move(x));
  m.push_back({"grad_sync_ms", "ms", Better::Lower, "the gradient reductions after backward (max over ranks)"});
  m.push_back({"comm_ms", "ms", Better::Lower,
               "time inside the groups' collectives, modelled link included (max over ranks)"});
  m.push_back({"compute_ms", "ms", Better::Lower, "step time outside the collectives (max over ranks)"});
  for (const auto& [g, stem] : kReportedGroups) {
    const std::string s(stem);
    m.push_back({s + "_comm_ms", "ms", Better::Lower,
                 "time inside the " + s + " group's collectives, modelled link included (max over ranks)"});
    m.push_back({s + "_bytes", "bytes", Better::Lower,
                 "bytes a rank sent in the " + s + " group's collectives per step (max over ranks)"});
  }
  m.push_back({"cross_node_bytes", "bytes", Better::Lower,
               "bytes a rank sent to ranks on other nodes per step, every group (max over ranks; 0 on one node)"});
  m.push_back({"model_tflops", "TFLOP/s", Better::Higher,
               "Megatron's model FLOPs of the block (attention + MoE, forward + backward) per second of step_ms"});
  for (auto& x : family_metrics({"tokens_per_s", "mfu", "peak_tflops", "dropped_fraction"})) m.push_back(std::move(x));
  return m;
}

double block_flop(const BlockConfig& c) {
  return attention_flop(c.moe.hidden, c.seq, c.tokens()) + moe_layer_flop(c.moe, c.tokens());
}

void record_block_step(State& state, comm::Communicator& world, const BlockConfig& c, const Mapping& m,
                       const BlockTimes& t, int64_t dropped_here, RankComms& comms, double step_s, CpuPeak* peak) {
  double comm_s = 0, cross = 0;
  for (const auto& tr : comms.traffic) comm_s += tr.seconds, cross += tr.cross_node_bytes;
  const double step = world.max_over_ranks(step_s);
  state.record("step_ms", step * 1e3);
  state.record("forward_ms", world.max_over_ranks(t.forward_s) * 1e3);
  state.record("backward_ms", world.max_over_ranks(t.backward_s) * 1e3);
  state.record("grad_sync_ms", world.max_over_ranks(t.grad_sync_s) * 1e3);
  state.record("comm_ms", world.max_over_ranks(comm_s) * 1e3);
  state.record("compute_ms", world.max_over_ranks(step_s - comm_s) * 1e3);
  for (const auto& [g, stem] : kReportedGroups) {
    const Traffic& tr = comms.traffic_of(g);
    state.record(std::string(stem) + "_comm_ms", world.max_over_ranks(tr.seconds) * 1e3);
    state.record(std::string(stem) + "_bytes", world.max_over_ranks(tr.bytes));
  }
  state.record("cross_node_bytes", world.max_over_ranks(cross));
  state.record("tokens_per_s", static_cast<double>(c.tokens()) / step);
  const double tflops = block_flop(c) / step / 1e12;
  state.record("model_tflops", tflops);
  if (peak && !state.counting()) {
    const double gemm = t.experts.seconds > 0 ? t.experts.flop / t.experts.seconds / 1e12 : 0;
    const double p = world.max_over_ranks(peak->cover(std::max(gemm, tflops / m.world)));
    state.record("peak_tflops", p);
    state.record("mfu", tflops / (p * m.world));
  }
  double dropped = static_cast<double>(dropped_here);
  world.allreduce(&dropped, &dropped, 1, comm::ElemType::F64, comm::ReduceOp::Sum);
  state.record("dropped_fraction", dropped / static_cast<double>(c.tokens() * c.moe.topk));
}

nlohmann::json mapping_json(const Mapping& m, const Groups& g) {
  nlohmann::json j = {{"tp", m.tp},   {"cp", m.cp},   {"dp", m.dp},         {"etp", m.etp},
                      {"ep", m.ep},   {"edp", m.edp}, {"order", m.order},   {"legacy", m.legacy()},
                      {"label", m.label()}};
  for (int k = 0; k < kGroupKinds; ++k) j["groups"][std::string(to_string(static_cast<Group>(k)))] = g.of[static_cast<size_t>(k)];
  return j;
}

}  // namespace mlsb::moe_train::fold
