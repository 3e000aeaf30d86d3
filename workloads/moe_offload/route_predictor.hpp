#pragma once
// Which experts the next layer will need, predicted before its router runs, from statistics learned
// on a profiling prefix of the trace (sequences the replay does not score):
//  - a layer-to-layer transition table T[l][e][e'] = P(e' in route(l+1) | e in route(l)), with add-one
//    smoothing toward the layer's popularity (the routing-path statistics of ExpertFlow, arXiv 2410.17954,
//    and MoE-Infinity's activation matrices, arXiv 2401.14361);
//  - per-layer popularity (for the `static` policy).
// A token's score for e' at l+1 is the mean of T[l][e][e'] over its k experts at l; a batch's score
// is 1 - prod over its tokens of (1 - token score): the probability at least one token needs e'.
#include <cstdint>
#include <vector>

#include "workloads/moe_offload/schedule.hpp"
#include "workloads/moe_offload/trace.hpp"

namespace mlsb::moe_offload {

class RoutePredictor {
 public:
  /// Learns from the tokens of `profile` (a schedule of the profiling sequences); an empty one learns
  /// nothing: uniform popularity, transitions equal to the prior.
  RoutePredictor(const RoutingTrace& t, const Schedule& profile);

  /// Writes the batch score of every expert of layer `layer + 1` (layer < L - 1) into `scores` [E],
  /// given the tokens [tokens, tokens + n) of the batch (trace token indices) and their routes at `layer`.
  void predict_next(const RoutingTrace& t, int64_t layer, const int64_t* tokens, int64_t n, float* scores) const;

  /// One token's score for every expert of layer `layer + 1` [E], given its k experts at `layer`.
  void token_scores(int64_t layer, const int32_t* experts, int64_t k, float* scores) const;

  /// A token's predicted routing path as keys layer * E + expert: its layer-0 experts (known before the
  /// forward: the first router reads the embedding), then for each later layer the k highest
  /// token_scores() chained from the layer before's predicted experts (ties to the lower id).
  std::vector<int32_t> path(const RoutingTrace& t, int64_t token) const;

  /// Tokens of `layer` routed to each expert during profiling, [L][E] flattened; all ones when nothing
  /// was learned.
  const std::vector<double>& popularity() const { return popularity_; }

 private:
  int64_t layers_, experts_;
  std::vector<float> transition_;   // [L-1][E][E]
  std::vector<double> popularity_;  // [L][E]
};

/// The uses a predictive cache foresees: for each step (b, l) of the schedule, the experts of layer l
/// on the predicted paths of the batch's tokens, and the step where the window of the step ends (the
/// paths of a window's tokens are known from the window's first step on).
struct PredictedUses {
  LookupStream predicted;
  std::vector<int64_t> horizon;  ///< per step: the first step after its window
};
PredictedUses make_predicted_uses(const RoutingTrace& t, const Schedule& s, const RoutePredictor& p);

}  // namespace mlsb::moe_offload
