#include "workloads/moe_train/flops.hpp"

namespace mlsb::moe_train {

double moe_layer_flop(const MoeConfig& c, int64_t tokens) {
  return 18.0 * static_cast<double>(tokens) * static_cast<double>(c.hidden) *
         static_cast<double>(c.topk * c.ffn + c.shared_inner());
}

double attention_flop(int64_t hidden, int64_t seq, int64_t tokens) {
  const double h = static_cast<double>(hidden);
  return 12.0 * static_cast<double>(tokens) * h * h * (2.0 + static_cast<double>(seq) / h);
}

std::vector<cpu::GemmShape> expert_gemm_shapes(const MoeConfig& c, int64_t tokens, int ranks) {
  const auto one_expert = [&](int64_t m, int64_t f, std::vector<cpu::GemmShape>& out) {
    const int64_t h = c.hidden;
    if (m <= 0 || f <= 0 || h <= 0) return;
    out.push_back({m, 2 * f, h});               // forward: x w13
    out.push_back({m, h, f});                   // forward: a w2
    out.push_back({m, f, h, false, true});      // backward: dy w2^T
    out.push_back({f, h, m, true, false});      // backward: a^T dy
    out.push_back({h, 2 * f, m, true, false});  // backward: x^T dh
    out.push_back({m, h, 2 * f, false, true});  // backward: dh w13^T
  };
  std::vector<cpu::GemmShape> shapes;
  if (c.experts > 0) one_expert((tokens * c.topk * ranks + c.experts - 1) / c.experts, c.ffn, shapes);
  if (c.shared_experts > 0) one_expert(tokens, c.shared_inner(), shapes);  // fused into one expert
  return shapes;
}

double logits_flop(int64_t hidden, int64_t vocab, int64_t tokens) {
  return 6.0 * static_cast<double>(tokens) * static_cast<double>(hidden) * static_cast<double>(vocab);
}

}  // namespace mlsb::moe_train
