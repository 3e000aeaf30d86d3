#pragma once
// Token dispatch: which routed assignments each expert keeps (capacity), and the permutation that lays
// them out contiguously by expert for the grouped GEMM (Megatron-Core's token permutation).
#include <cstdint>
#include <vector>

#include "workloads/moe_train/router.hpp"

namespace mlsb::moe_train {

struct DispatchPlan {
  int64_t tokens = 0, experts = 0, topk = 0;
  int64_t capacity = -1;             ///< per expert; -1 = dropless
  std::vector<int64_t> offsets;      ///< [experts + 1] first permuted row of each expert
  std::vector<int64_t> row_token;    ///< [rows] the token of each permuted row
  std::vector<int64_t> row_slot;     ///< [rows] its assignment (token * topk + j)
  std::vector<int64_t> slot_row;     ///< [tokens * topk] permuted row of each assignment, -1 if dropped
  int64_t dropped = 0;               ///< assignments dropped by capacity
  int64_t rows() const { return static_cast<int64_t>(row_token.size()); }
  /// Rows each expert received (offsets' differences).
  std::vector<int64_t> tokens_per_expert() const;
};

/// Lays out the kept assignments of `r` by expert; within an expert by token index. With capacity C
/// (expert_capacity(c, tokens)), an expert over C keeps its C assignments of highest weight (Probs; ties
/// to the lower token) or its first C tokens (Position). Experts that receive nothing get empty ranges.
template <typename T>
DispatchPlan plan_dispatch(const Routing<T>& r, const MoeConfig& c);

/// Load statistics of a plan: max over experts of rows / mean rows (1 = perfectly balanced; 0 when no
/// rows), and the dropped fraction of assignments.
double load_imbalance(const std::vector<int64_t>& rows_per_expert);

}  // namespace mlsb::moe_train
