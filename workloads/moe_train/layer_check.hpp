#pragma once
// The layer mode's verification (DuckDB-style: a wrong answer fails the case): load statistics by
// brute force, and the layer's output for a few tokens against a plain double-precision reference.
#include <cstdint>
#include <string>

#include "workloads/moe_train/moe_layer.hpp"

namespace mlsb::moe_train {

/// Recounts assignments per expert from the chosen experts, and kept rows and drops from the capacity:
/// "" when they match the routing's load and the plan, else what differs.
std::string check_load_statistics(const Routing<float>& r, const DispatchPlan& p, const MoeConfig& c);

/// For tokens 0, tokens/2 and tokens-1 of x [tokens, hidden] (this rank's): recomputes logits, the
/// combine weights of the chosen experts, that the chosen experts are the top-k (without groups), and
/// y = sum of weight * SwiGLU expert (weights regenerated from `seed` by init_expert, so remote experts
/// under expert parallelism are checked too) + shared experts, in double. "" when y matches within a
/// relative L2 error of 1e-4 per token, else the first mismatch. `layer` holds its initial weights.
std::string check_layer_output(const MoeLayer<float>& layer, const float* x, const float* y, uint64_t seed);

}  // namespace mlsb::moe_train
