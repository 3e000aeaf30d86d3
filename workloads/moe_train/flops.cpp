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

double logits_flop(int64_t hidden, int64_t vocab, int64_t tokens) {
  return 6.0 * static_cast<double>(tokens) * static_cast<double>(hidden) * static_cast<double>(vocab);
}

}  // namespace mlsb::moe_train
