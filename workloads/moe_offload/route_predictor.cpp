#include "workloads/moe_offload/route_predictor.hpp"

#include <algorithm>
#include <numeric>

namespace mlsb::moe_offload {

RoutePredictor::RoutePredictor(const RoutingTrace& t, const Schedule& profile)
    : layers_(t.layers), experts_(t.experts) {
  const int64_t L = layers_, E = experts_, k = t.topk;
  popularity_.assign(L * E, 0.0);
  std::vector<double> pair((L > 1 ? L - 1 : 0) * E * E, 0.0), from(L * E, 0.0);
  for (const int64_t tok : profile.tokens) {
    for (int64_t l = 0; l < L; ++l) {
      const int32_t* r = t.experts_of(tok, l);
      for (int64_t j = 0; j < k; ++j) {
        popularity_[l * E + r[j]] += 1;
        if (l + 1 == L) continue;
        from[l * E + r[j]] += 1;
        const int32_t* next = t.experts_of(tok, l + 1);
        for (int64_t i = 0; i < k; ++i) pair[(l * E + r[j]) * E + next[i]] += 1;
      }
    }
  }
  if (profile.tokens.empty()) std::fill(popularity_.begin(), popularity_.end(), 1.0);
  // T[l][e][e'] = (pairs + k * prior(e')) / (from + 1): add-one smoothing toward the layer's
  // popularity, prior(e') = popularity of e' at l+1 / tokens of l+1, so an unseen e predicts the prior.
  transition_.assign(pair.size(), 0.f);
  for (int64_t l = 0; l + 1 < L; ++l) {
    double total = 0;
    for (int64_t e = 0; e < E; ++e) total += popularity_[(l + 1) * E + e];
    for (int64_t e = 0; e < E; ++e)
      for (int64_t n = 0; n < E; ++n) {
        const double prior = popularity_[(l + 1) * E + n] / total;
        transition_[(l * E + e) * E + n] =
            static_cast<float>(std::min(1.0, (pair[(l * E + e) * E + n] + k * prior) / (from[l * E + e] + 1)));
      }
  }
}

void RoutePredictor::token_scores(int64_t layer, const int32_t* experts, int64_t k, float* scores) const {
  const int64_t E = experts_;
  for (int64_t e = 0; e < E; ++e) {
    double p = 0;
    for (int64_t j = 0; j < k; ++j) p += transition_[(layer * E + experts[j]) * E + e];
    scores[e] = static_cast<float>(std::min(1.0, p / static_cast<double>(k)));
  }
}

void RoutePredictor::predict_next(const RoutingTrace& t, int64_t layer, const int64_t* tokens, int64_t n,
                                  float* scores) const {
  const int64_t E = experts_;
  std::vector<double> miss(E, 1.0);  // P(no token of the batch needs e')
  std::vector<float> token(E);
  for (int64_t i = 0; i < n; ++i) {
    token_scores(layer, t.experts_of(tokens[i], layer), t.topk, token.data());
    for (int64_t e = 0; e < E; ++e) miss[e] *= 1.0 - token[e];
  }
  for (int64_t e = 0; e < E; ++e) scores[e] = static_cast<float>(1.0 - miss[e]);
}

std::vector<int32_t> RoutePredictor::path(const RoutingTrace& t, int64_t token) const {
  const int64_t L = layers_, E = experts_, k = t.topk;
  std::vector<int32_t> keys, current(t.experts_of(token, 0), t.experts_of(token, 0) + k);
  std::vector<float> scores(E);
  std::vector<int32_t> order(E);
  for (int64_t l = 0;; ++l) {
    for (const int32_t e : current) keys.push_back(static_cast<int32_t>(l * E + e));
    if (l + 1 == L) break;
    token_scores(l, current.data(), k, scores.data());
    std::iota(order.begin(), order.end(), 0);
    std::partial_sort(order.begin(), order.begin() + k, order.end(),
                      [&](int32_t a, int32_t b) { return scores[a] != scores[b] ? scores[a] > scores[b] : a < b; });
    current.assign(order.begin(), order.begin() + k);
  }
  return keys;
}

PredictedUses make_predicted_uses(const RoutingTrace& t, const Schedule& s, const RoutePredictor& p) {
  const int64_t L = t.layers, E = t.experts;
  PredictedUses u;
  u.predicted.layers = L;
  u.predicted.experts = E;
  std::vector<std::vector<int32_t>> paths(s.tokens.size());
  for (size_t i = 0; i < s.tokens.size(); ++i) paths[i] = p.path(t, s.tokens[i]);
  std::vector<uint32_t> mark(L * E, 0);
  uint32_t stamp = 0;
  for (size_t w = 0; w + 1 < s.window_start.size(); ++w) {
    for (int64_t b = s.window_start[w]; b < s.window_start[w + 1]; ++b) {
      for (int64_t l = 0; l < L; ++l) {
        ++stamp;
        const size_t first = u.predicted.expert.size();
        for (int64_t i = s.batch_start[b]; i < s.batch_start[b + 1]; ++i)
          for (const int32_t key : paths[i])
            if (key / E == l && mark[key] != stamp) mark[key] = stamp, u.predicted.expert.push_back(key % E);
        std::sort(u.predicted.expert.begin() + first, u.predicted.expert.end());
        u.predicted.step_start.push_back(u.predicted.expert.size());
        u.horizon.push_back(s.window_start[w + 1] * L);
      }
    }
  }
  return u;
}


}  // namespace mlsb::moe_offload
