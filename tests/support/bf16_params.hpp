#pragma once
// The CPU MoE layer as the GPU layer's oracle: its weights rounded to bf16, as the GPU layer's GEMMs read them.
#include "support/close.hpp"
#include "workloads/moe_train/moe_layer.hpp"

namespace mlsb::test {

inline void round_params(moe_train::MoeParams<float>& p) {
  for (auto* v : {&p.router, &p.experts.w13, &p.experts.w2, &p.shared.w13, &p.shared.w2})
    for (auto& x : *v) x = round_bf16(x);
}

}  // namespace mlsb::test
