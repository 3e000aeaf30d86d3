#pragma once
// The moe_train family of benchmarks, each registered on its own with only the axes it reads:
//   moe_train.layer  one MoE layer's training step (forward, backward, AdamW) on synthetic tokens, CPU or
//                    CUDA, with expert parallelism over the case's communicator
//   moe_train.lm     a small MoE decoder LM trained byte-level on a real text corpus (loss curve, routing)
//   moe_train.plan   a FinDEP-style plan of the layer's overlapped expert parallelism (chunks, where the shared
//                    experts compute) for the run's ranks and a modelled link, run and measured beside its prediction
//   moe_train.block  one transformer block (attention + MoE) with MoE Parallel Folding: attention and experts on
//                    different groups of the same ranks (fold/), measured per group, checked against one rank
// `moe_train` (with `-p mode=layer|lm|plan`, layer by default) is an alias for them, so suites, command lines
// and stored runs of the single workload they were keep working.
#include <string_view>
#include <vector>

#include "harness/workload.hpp"
#include "workloads/moe_train/precision/activation_store.hpp"

namespace mlsb::moe_train {

/// The axes of one MoE layer's shape and routing: preset, scale, the custom shape (hidden, ffn, experts,
/// topk, shared experts), router, groups, capacity and drop policy, loss coefficients, bias rate.
std::vector<Axis> layer_shape_axes();
/// precision (the recipe), accumulate, amax_history, bf16_blocks, activation_storage and the layer_aware storage of
/// each layer type `stored` (the LM: norm, attention, moe; the layer: moe): method axes, so the cases of a
/// precision sweep see the same data, initial weights and routing seed.
std::vector<Axis> precision_axes(std::initializer_list<precision::LayerType> stored);
/// threads and lr: what both benchmarks train with.
std::vector<Axis> training_axes();

/// The family's metrics named by `names`, in that order, from one vocabulary (select_metrics).
std::vector<Metric> family_metrics(std::initializer_list<std::string_view> names);

/// Appended to the runner's out-of-memory reason: the axes that shrink a case.
constexpr std::string_view kMemoryHint = "lower tokens or batch, or a larger scale for a preset";
/// Untimed layer steps before any measured one (moe_train.layer's and .plan's warm-up, and the planner's before it
/// profiles the tasks): under mpirun the second step's all-to-alls still took 2-3x their later time (2 ranks,
/// Open MPI 4.1), so with one warm-up step the first measured one stood out.
constexpr int kLayerWarmupSteps = 2;

}  // namespace mlsb::moe_train
