#include "workloads/moe_train/fold/fold_axes.hpp"

#include "harness/axes.hpp"

namespace mlsb::moe_train::fold {

std::vector<Axis> block_shape_axes() {
  return {
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
      string_axis("dispatcher", {"alltoall"},
                  "token dispatcher: alltoall (Megatron's MoEAlltoAllTokenDispatcher: all-to-allv over EP, all-gather-v "
                  "over ETP) or allgather (MoEAllGatherTokenDispatcher: every token all-gathered over ETP x EP)",
                  {"alltoall", "allgather"}),
      data_axis(int_axis("heads", {4}, "attention heads", 1, 65536)),
      data_axis(int_axis("seq", {128}, "positions per sequence", 1, 1 << 20)),
      data_axis(int_axis("batch", {8}, "sequences per step, all ranks together", 1, 1 << 20)),
  };
}

std::vector<Axis> cluster_axes() {
  return {
      int_axis("ranks_per_node", {0}, "modelled cluster: consecutive ranks per node (0 = one node)", 0, 1 << 20),
      float_axis("intra_gbps", {0.0}, "modelled link inside a node, GB/s per rank (0 = the real transport alone)", 0,
                 1e6),
      float_axis("intra_latency_us", {0.0}, "modelled link inside a node: latency per message, microseconds", 0, 1e9),
      float_axis("inter_gbps", {0.0}, "modelled link between nodes, GB/s per rank (0 = the real transport alone)", 0,
                 1e6),
      float_axis("inter_latency_us", {0.0}, "modelled link between nodes: latency per message, microseconds", 0, 1e9),
  };
}

BlockConfig read_block(const State& s) {
  BlockConfig c;
  MoeConfig& m = c.moe;
  m.hidden = s.get_int("hidden"), m.ffn = s.get_int("ffn"), m.experts = s.get_int("experts");
  m.topk = s.get_int("topk");
  m.router = parse_router(s.get_string("router"));
  m.capacity_factor = s.get_float("capacity_factor");
  m.drop = parse_drop_policy(s.get_string("drop_policy"));
  m.aux_coef = 0, m.z_coef = 0, m.bias_rate = 0;
  c.dispatcher = parse_dispatcher(s.get_string("dispatcher"));
  c.heads = s.get_int("heads"), c.seq = s.get_int("seq"), c.batch = s.get_int("batch");
  validate(c);
  return c;
}

Cluster read_cluster(const State& s, int world) {
  return make_cluster(world, static_cast<int>(s.get_int("ranks_per_node")), s.get_float("intra_gbps"),
                      s.get_float("intra_latency_us"), s.get_float("inter_gbps"), s.get_float("inter_latency_us"));
}

void check_sizes(const BlockConfig& c, int tp, int cp, int etp, int ep, std::string_view order) {
  RankGenerator(tp, cp, 1, 1, 1, order);
  RankGenerator(etp, 1, ep, 1, 1, order);
  Mapping sizes;
  sizes.tp = tp, sizes.cp = cp, sizes.etp = etp, sizes.ep = ep;
  check_model(sizes, c.moe.experts, c.moe.ffn, c.heads, c.seq);
}

}  // namespace mlsb::moe_train::fold
