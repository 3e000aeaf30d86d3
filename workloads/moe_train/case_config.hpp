#pragma once
// What the moe_train benchmarks share in setting up a case: the layer configuration, the optimizer, the
// expert-load series.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "harness/workload.hpp"
#include "workloads/moe_train/adamw.hpp"
#include "workloads/moe_train/config.hpp"
#include "workloads/moe_train/precision/recipe.hpp"

namespace mlsb::moe_train {

/// The case's layer configuration: a preset's shape and routing (scaled), or the shape axes when
/// preset is custom; capacity, drop policy and loss coefficients from the axes. Skips the case
/// (State::skip, naming the axis) when validate() rejects it for `ranks` ranks.
MoeConfig layer_config(const State& state, int ranks);
/// The case's communicator for the CPU layer's exchange, which passes host memory: skips the case
/// (State::skip) when the communicator needs device buffers (--comm nccl, which the cuda backend takes).
comm::Communicator& cpu_comm(State& state);
/// The recipe from the precision axes (family.hpp's precision_axes), seeded by the case's seed.
precision::PrecisionConfig precision_config(const State& state);
/// AdamW settings from the lr axis (betas 0.9/0.95, eps 1e-8, weight decay 0.1).
AdamWConfig optimizer_config(const State& state);

/// One rank's synthetic step of the layer: tokens x ~ N(0, 1) and the output gradient dy ~ N(0, 1) / tokens,
/// each [tokens, hidden], from the case's seed and the rank (every rank routes its own tokens).
struct LayerInputs {
  std::vector<float> x, dy;
};
LayerInputs layer_inputs(uint64_t seed, int rank, int64_t tokens, int64_t hidden);

/// Stores the tokens each expert received (`tokens_per_expert`, after capacity) as the series
/// "expert_load" (x = expert, y = tokens), drawn by the HTML report as one column per expert with the
/// balanced load (the mean) marked; `what` says which tokens ("the first measured step, all ranks").
void add_expert_load(State& state, const std::vector<int64_t>& tokens_per_expert, const std::string& what);

}  // namespace mlsb::moe_train
