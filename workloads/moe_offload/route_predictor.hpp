#pragma once
// Which experts a token will need, predicted before its routers run, from statistics learned on a
// profiling prefix of the trace (sequences the replay does not score):
//  - a layer-to-layer transition table T[l][e][e'] = P(e' in route(l+1) | e in route(l)), with add-one
//    smoothing toward the layer's popularity (the routing-path statistics of ExpertFlow, arXiv 2410.17954,
//    and MoE-Infinity's activation matrices, arXiv 2401.14361);
//  - a token-to-token table M[l][e][e'] = P(e' in the route at l | e in the previous token's route at l)
//    / k (rows sum to 1), smoothed toward the add-one-smoothed popularity (consecutive tokens share
//    experts; mixtral-offloading, arXiv 2312.17238);
//  - per vocabulary id v and layer l, P(e in route(l) | v), smoothed the same way, kept sparse: only
//    the (layer, expert) pairs profiling saw the id routed to (ExpertFlow predicts a token's whole path
//    from the token itself);
//  - per-layer popularity (for the `static` policy, and the prior of the others).
// A token's score for e' at l+1 is the mean of T[l][e][e'] over its k experts at l; a batch's score
// is 1 - prod over its tokens of (1 - token score): the probability at least one token needs e'.
// A path combines the evidence it has by naive Bayes: P(e at l) ~ P_chain(e) * prod_i P_i(e) / prior(e),
// each P normalised over the layer's experts (the chain from the layer before; the token's id when
// profiling saw it; the previous token's route at l when that token has already run), probabilities
// floored at 1e-12. Memory: 8 L E^2 bytes for T and M, 8 bytes per profiled (id, layer, expert).
#include <cstdint>
#include <unordered_map>
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
  /// forward: the first router reads the embedding), then for each later layer l the k most likely
  /// experts (ties to the lower id) of the naive-Bayes combination of: the chain, the mean of T[l-1]
  /// over the layer before's predicted experts weighted by their probabilities; the token's vocabulary
  /// id, when profiling saw it; and when `previous_known` (the sequence's previous token has run), M[l]
  /// over that token's actual experts at l (ignored for a sequence's first token).
  std::vector<int32_t> path(const RoutingTrace& t, int64_t token, bool previous_known) const;

  /// path() of every token of `s`, in its order; a token's previous one counts as known when an earlier
  /// window of `s` processed it.
  std::vector<std::vector<int32_t>> paths(const RoutingTrace& t, const Schedule& s) const;

  /// Tokens of `layer` routed to each expert during profiling, [L][E] flattened; all ones when nothing
  /// was learned.
  const std::vector<double>& popularity() const { return popularity_; }

 private:
  int64_t layers_, experts_;
  std::vector<float> transition_;   // [L-1][E][E]
  std::vector<float> temporal_;     // [L][E][E], M above
  std::vector<double> popularity_;  // [L][E]
  std::vector<double> prior_;       // [L][E] add-one-smoothed popularity, per layer summing to 1
  struct IdFactor {
    int32_t key;   // layer * E + expert
    float factor;  // P(e | id) / P(e' | id) for an e' the id never met
  };
  std::vector<IdFactor> id_factor_;  // per id, keys ascending
  std::unordered_map<int32_t, std::pair<size_t, size_t>> token_;  // id -> its range of id_factor_
};

/// The uses a predictive cache foresees: for each step (b, l) of the schedule, the experts of layer l
/// on the predicted paths of the batch's tokens, and the step where the window of the step ends (the
/// paths of a window's tokens are known from the window's first step on).
struct PredictedUses {
  LookupStream predicted;
  std::vector<int64_t> horizon;  ///< per step: the first step after its window
};
PredictedUses make_predicted_uses(const RoutingTrace& t, const Schedule& s, const RoutePredictor& p);

/// The same from the paths of `s`'s tokens, in its order (RoutePredictor::paths, or what
/// schedule_tokens returns), each L * k keys in layer order.
PredictedUses make_predicted_uses(const Schedule& s, const std::vector<std::vector<int32_t>>& paths, int64_t layers,
                                  int64_t experts);

/// What a perfect path predictor would foresee: the schedule's own lookups (`lookups` =
/// make_lookups(t, s)), with the same window horizons as make_predicted_uses.
PredictedUses true_uses(const LookupStream& lookups, const Schedule& s);

}  // namespace mlsb::moe_offload
