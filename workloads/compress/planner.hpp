#pragma once
// A Kimad-style planner (Xin, Canini, Richtarik et al., "Kimad: Adaptive Gradient Compression with
// Bandwidth Awareness", DistributedML 2023): for a model's tensors and a link bandwidth, choose each
// tensor's codec to minimise the modelled communication time under a global error budget.
#include <string>
#include <vector>

#include "workloads/compress/codec.hpp"

namespace mlsb::compress {

/// Measured cost of one candidate codec on one tensor.
struct OptionCost {
  double compress_s = 0, decompress_s = 0;
  double wire_bytes = 0;  ///< compressed size
  double sq_error = 0;    ///< ||x - decode(encode(x))||^2 (0 for lossless)
};

struct TensorCosts {
  std::string name;
  double bytes = 0;   ///< original size
  double norm2 = 0;   ///< ||x||^2 over finite elements
  std::vector<OptionCost> options;  ///< one per candidate, in the candidates' order
};

struct Plan {
  std::vector<size_t> choice;  ///< per tensor, the index of the chosen candidate
  double predicted_s = 0;      ///< sum over tensors of compress + wire / link + decompress
  double rel_error = 0;        ///< sqrt(sum sq_error / sum norm2) of the chosen options
};

/// Candidate codecs for tensors of `dtype`: none (the raw tensor, no codec time; always first),
/// exponent, zstd -1, cast-bf16 (fp32 only), int8-block, fp8-e4m3, topk 10% and 1%, powersgd rank 4 —
/// without error feedback, so one step's error is what the budget bounds.
std::vector<CodecConfig> plan_candidates(DType dtype);

/// Minimises sum_i t_i(o_i), t = compress + wire / link + decompress, subject to
/// sqrt(sum_i err_i / sum_i norm2_i) <= error_budget: a multiple-choice knapsack, solved exactly by
/// dynamic programming over the error budget split into 4096 units (each option's error rounded up to
/// whole units, so the plan never exceeds the budget; it can miss the optimum by at most the slack the
/// rounding costs). Candidate 0 must be lossless, so a plan always exists. Options with an infinite time
/// (a codec that cannot run on the tensor) are never chosen. Throws std::invalid_argument when
/// link_gbps <= 0 or error_budget < 0.
Plan choose_plan(const std::vector<TensorCosts>& tensors, double link_gbps, double error_budget);

}  // namespace mlsb::compress
