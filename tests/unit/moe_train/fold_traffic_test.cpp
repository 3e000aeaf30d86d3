// The folded block's traffic model on the MoE Parallel Folding paper's worked example (8 ranks, T = 2048 tokens per
// rank, H = 4096, k = 2, E = 8, bf16): the bytes per rank each mapping's groups send, and what crosses nodes of 4.
#include "workloads/moe_train/fold/traffic_model.hpp"

#include <gtest/gtest.h>

namespace mlsb::moe_train::fold {
namespace {

BlockConfig paper_block() {
  BlockConfig c;
  c.moe.hidden = 4096, c.moe.ffn = 14336, c.moe.experts = 8, c.moe.topk = 2, c.moe.aux_coef = 0, c.moe.z_coef = 0;
  c.heads = 32, c.seq = 2048, c.batch = 8;  // 16384 tokens: T = 2048 per rank on 8 ranks
  return c;
}

PredictedTraffic predict(int tp, int etp, int ep, int rank = 0) {
  const Mapping m = make_mapping(8, tp, 1, etp, ep, 1, kDefaultOrder);
  Cluster cluster;
  cluster.ranks_per_node = 4;
  return predict_traffic(paper_block(), m, make_groups(m), cluster, rank, 2);
}

double at(const PredictedTraffic& p, Group g) { return p.bytes[static_cast<size_t>(g)]; }

TEST(FoldTraffic, PapersWorkedExample) {
  // The paper's all-to-all per direction pair, 2 (EP-1)/EP T k H b, twice (forward and backward).
  const double T = 2048, k = 2, H = 4096, b = 2;
  const PredictedTraffic folded = predict(2, 1, 8);
  EXPECT_DOUBLE_EQ(at(folded, Group::Ep) - 7 * 8 * 8, 2 * 2 * 7.0 / 8 * T * k * H * b);
  EXPECT_DOUBLE_EQ(at(folded, Group::Ep) - 7 * 8 * 8, 117440512);  // 117.4 MB, 58.7 MB per direction pair
  EXPECT_DOUBLE_EQ(at(folded, Group::Etp), 0);
  EXPECT_DOUBLE_EQ(at(folded, Group::Tp) - 2 * 0.5 * (2 * H + H * 8) * b, 4 * T * H * b);  // 67.1 MB
  const PredictedTraffic legacy = predict(2, 2, 4);  // ETP = TP = 2, EP 4 inside DP 4
  EXPECT_DOUBLE_EQ(at(legacy, Group::Ep) - 7 * 8 * 8, 100663296);  // 4 (3/4) T k H b
  EXPECT_DOUBLE_EQ(at(legacy, Group::Etp), 134217728);              // 4 (ETP-1) T k H b
  // Nodes of 4: folded EP 8 sends 4 of 7 shares off the node; EP 4 with ETP 1 keeps the all-to-all inside it.
  const PredictedTraffic inside = predict(2, 1, 4);
  EXPECT_DOUBLE_EQ(at(inside, Group::Ep) - 3 * 8 * 8, 100663296);
  const auto cross = [](const PredictedTraffic& p, Group g) { return p.cross_node[static_cast<size_t>(g)]; };
  EXPECT_DOUBLE_EQ(cross(inside, Group::Ep), 0);
  EXPECT_DOUBLE_EQ(cross(folded, Group::Ep), (117440512 + 7 * 8 * 8) * 4.0 / 7);
  // EP [0,2,4,6]: 4 and 6 off the node; the counts' all-gather over ETP x EP (every rank): 4 of 7.
  EXPECT_DOUBLE_EQ(cross(legacy, Group::Ep), 100663296 * 2.0 / 3 + 7 * 8 * 8 * 4.0 / 7);
  EXPECT_DOUBLE_EQ(cross(legacy, Group::Etp), 0) << "ETP [0,1] inside a node";
  // But then EDP = 2 ([0,4]) crosses nodes: without gradient accumulation the expert gradients' all-reduce
  // (2 experts x 3 H F x 2 bytes = 704.6 MB) outweighs every token the all-to-all moves in one step.
  EXPECT_DOUBLE_EQ(cross(inside, Group::Edp), 2 * 3.0 * H * 14336 * b);
  EXPECT_GT(inside.cross_node_bytes, folded.cross_node_bytes);
}

TEST(FoldTraffic, OneRankGroupsSendNothingAndTimesFollowTheLinks) {
  const Mapping m = make_mapping(8, 1, 1, 1, 1, 1, kDefaultOrder);  // pure data parallel: only DP and EDP talk
  Cluster cluster;
  cluster.ranks_per_node = 4, cluster.intra = {100, 0}, cluster.inter = {10, 0};
  const PredictedTraffic p = predict_traffic(paper_block(), m, make_groups(m), cluster, 0, 2);
  for (Group g : {Group::Tp, Group::Cp, Group::Etp}) EXPECT_EQ(at(p, g), 0) << to_string(g);
  EXPECT_GT(at(p, Group::DpCp), 0);
  // 4 of 7 DP peers are off the node: the inter-node link (10 GB/s) decides the time.
  const double dp = at(p, Group::DpCp);
  EXPECT_NEAR(p.seconds[static_cast<size_t>(Group::DpCp)], dp * 4 / 7 / 10e9, dp * 1e-15);
}

}  // namespace
}  // namespace mlsb::moe_train::fold
