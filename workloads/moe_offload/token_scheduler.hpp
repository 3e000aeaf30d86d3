#pragma once
// ExpertFlow's token scheduling (arXiv 2410.17954): within each window of batches whose tokens are
// available together, regroup the tokens so that tokens with similar predicted routing paths share a
// batch, and consecutive batches share experts, so each batch needs fewer distinct experts and the
// cache is reused. A token's path is RoutePredictor::paths(): its layer-0 experts (known before the
// forward: the first router reads the embedding) followed by the most likely experts of each later
// layer given the layer before, the token's vocabulary id and, when it has run, the previous token of
// its sequence. Batches are filled greedily: each next token is the one whose path overlaps most with
// the experts the batch (or, for its first token, the previous batch) already needs.
#include "workloads/moe_offload/route_predictor.hpp"
#include "workloads/moe_offload/schedule.hpp"

namespace mlsb::moe_offload {

/// The same tokens, batch sizes and windows as `s`, regrouped within each window. When given,
/// `regrouped_paths` receives the tokens' predicted paths (RoutePredictor::paths) in the returned order.
Schedule schedule_tokens(const RoutingTrace& t, const Schedule& s, const RoutePredictor& p,
                         std::vector<std::vector<int32_t>>* regrouped_paths = nullptr);

}  // namespace mlsb::moe_offload
