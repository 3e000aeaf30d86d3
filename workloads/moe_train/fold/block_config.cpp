#include "workloads/moe_train/fold/block_config.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <string>

#include "workloads/moe_train/case_config.hpp"
#include "workloads/moe_train/init.hpp"

namespace mlsb::moe_train::fold {
namespace {

std::mt19937_64 tensor_stream(uint64_t seed, uint64_t tensor) {
  return std::mt19937_64(splitmix64(seed ^ splitmix64(0xb10cULL + tensor)));
}

}  // namespace

Dispatcher parse_dispatcher(std::string_view name) {
  if (name == "alltoall") return Dispatcher::AllToAll;
  if (name == "allgather") return Dispatcher::AllGather;
  throw std::invalid_argument("dispatcher: '" + std::string(name) + "' is not alltoall or allgather");
}

void validate(const BlockConfig& c) {
  if (c.heads < 1 || c.moe.hidden % c.heads != 0)
    throw std::invalid_argument("heads: " + std::to_string(c.heads) + " does not divide hidden " +
                                std::to_string(c.moe.hidden));
  if (c.moe.shared_experts != 0) throw std::invalid_argument("shared_experts: the folded block has no shared experts");
  if (c.moe.aux_coef != 0 || c.moe.z_coef != 0)
    throw std::invalid_argument("aux_coef: the folded block has no aux or z loss (both coefficients must be 0)");
  if (c.seq < 1) throw std::invalid_argument("seq: must be >= 1");
  if (c.batch < 1) throw std::invalid_argument("batch: must be >= 1");
  moe_train::validate(c.moe, 1);
}

void validate(const BlockConfig& c, const Mapping& m) {
  validate(c);
  check_model(m, c.moe.experts, c.moe.ffn, c.heads, c.seq);
  if (c.batch % m.dp != 0)
    throw std::invalid_argument("batch: " + std::to_string(c.batch) + " sequences do not divide by dp = " +
                                std::to_string(m.dp));
}

BlockWeights BlockWeights::zeros() const {
  BlockWeights z = *this;
  for (auto* v : {&z.norm1, &z.norm2, &z.attn.wqkv, &z.attn.wo, &z.router, &z.experts.w13, &z.experts.w2})
    std::fill(v->begin(), v->end(), 0.0f);
  return z;
}

BlockWeights init_block(const BlockConfig& c, uint64_t seed) {
  const int64_t h = c.moe.hidden, E = c.moe.experts;
  BlockWeights w;
  w.norm1.resize(h), w.norm2.resize(h);
  auto r1 = tensor_stream(seed, 1), r2 = tensor_stream(seed, 2);
  fill_normal(w.norm1, 0.1, r1), fill_normal(w.norm2, 0.1, r2);
  for (auto* g : {&w.norm1, &w.norm2})
    for (auto& v : *g) v += 1.0f;
  w.attn.dim = h, w.attn.heads = c.heads;
  w.attn.wqkv.resize(h * 3 * h), w.attn.wo.resize(h * h), w.router.resize(h * E);
  auto r3 = tensor_stream(seed, 3), r4 = tensor_stream(seed, 4), r5 = tensor_stream(seed, 5);
  const double fan_in = 1.0 / std::sqrt(static_cast<double>(h));
  fill_normal(w.attn.wqkv, fan_in, r3), fill_normal(w.attn.wo, fan_in, r4), fill_normal(w.router, fan_in, r5);
  w.experts.resize(E, h, c.moe.ffn);
  ExpertWeights<float> one;
  for (int64_t e = 0; e < E; ++e) {
    init_expert(seed, e, one, h, c.moe.ffn);
    std::copy(one.w13.begin(), one.w13.end(), w.experts.w13_of(e));
    std::copy(one.w2.begin(), one.w2.end(), w.experts.w2_of(e));
  }
  return w;
}

BlockData block_data(const BlockConfig& c, uint64_t seed) {
  LayerInputs in = layer_inputs(seed, 0, c.tokens(), c.moe.hidden);
  return {std::move(in.x), std::move(in.dy)};
}

}  // namespace mlsb::moe_train::fold
