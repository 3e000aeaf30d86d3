#pragma once
// Verification of overlapped expert parallelism: a step with overlap=chunked against the same step with
// overlap=none must be identical bit for bit (the pipeline moves rows and reorders nothing a GEMM sees).
#include <cstdint>
#include <string>
#include <vector>

#include "backends/comm/communicator.hpp"
#include "workloads/moe_train/adamw.hpp"
#include "workloads/moe_train/config.hpp"
#include "workloads/moe_train/overlap.hpp"
#include "workloads/moe_train/precision/recipe.hpp"

namespace mlsb::moe_train {

/// Builds two layers over `comm` (collective: every rank calls it) with the initial weights of `seed`,
/// one with overlap=none and one with `ep` (its link model left out: it changes when, not what), runs
/// forward and backward of x and dy [tokens, hidden] through both and compares byte for byte: y, dx,
/// aux and z losses, the router, expert and shared-expert gradients, the rows per expert, the rows each
/// local expert computed and the drops. "" when all are identical on every rank, else the first
/// difference seen by this rank (or that another rank saw one). T is float or double.
template <typename T>
std::string check_overlap_identical(const MoeConfig& config, comm::Communicator& comm, int threads, const EpOptions& ep,
                                    uint64_t seed, const T* x, const T* dy, int64_t tokens);

/// The same check on the CUDA layer (gpu_layer.hpp): two fresh layers over `comm` (collective), their forward
/// output, then one step(): y, the gradients (x, router, experts, shared experts), aux and z losses, the
/// objective, the rows per expert and the drops compared byte for byte; both layers under `precision` (the fp8
/// GEMMs too). Throws what make_gpu_layer throws (no CUDA, no GPU).
std::string check_gpu_overlap_identical(const MoeConfig& config, comm::Communicator& comm, const EpOptions& ep,
                                        uint64_t seed, const AdamWConfig& optimizer, const std::vector<float>& x,
                                        const std::vector<float>& dy, int64_t tokens,
                                        const precision::PrecisionConfig& precision = {});

}  // namespace mlsb::moe_train
