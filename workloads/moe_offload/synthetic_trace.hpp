#pragma once
// Synthetic routing traces with the three properties expert caches exploit, each an axis:
//  - skew: expert popularity per layer is Zipf(s) over a random permutation of the experts
//    (s = 0 is uniform);
//  - temporal locality: each of a token's k slots repeats the previous token's expert of the same
//    slot and layer with probability `locality` (consecutive tokens of a sequence share experts);
//  - inter-layer correlation: otherwise, with probability `correlation` the slot follows a fixed random
//    map from the expert of the same slot at the layer before (routing paths, as ExpertFlow and
//    Pre-gated MoE observe), else it draws from the Zipf popularity.
// A slot that would repeat an expert already chosen for the token draws again from the popularity.
#include <cstdint>

#include "workloads/moe_offload/trace.hpp"

namespace mlsb::moe_offload {

struct SyntheticTraceSpec {
  int64_t layers = 8, experts = 8, topk = 2;
  int64_t sequences = 16, seq_len = 256;
  double zipf = 1.0;         ///< popularity exponent s >= 0
  double locality = 0.5;     ///< P(slot repeats the previous token's), in [0, 1]
  double correlation = 0.5;  ///< P(slot follows the layer-to-layer map), in [0, 1]
  uint64_t seed = 1;
};

/// A deterministic trace for the spec (the same spec gives the same trace); `source` records the spec.
/// Weights are a softmax of decreasing random logits. Throws std::invalid_argument naming the axis
/// ("topk: 9 exceeds experts (8)", "locality: must be in [0, 1]").
RoutingTrace synthetic_trace(const SyntheticTraceSpec& spec);

}  // namespace mlsb::moe_offload
