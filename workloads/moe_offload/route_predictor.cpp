#include "workloads/moe_offload/route_predictor.hpp"

#include <algorithm>
#include <numeric>

namespace mlsb::moe_offload {

namespace {

// Whether `token` opens its sequence (has no previous token).
bool first_of_sequence(const RoutingTrace& t, int64_t token) {
  return std::binary_search(t.seq_start.begin(), t.seq_start.end(), token);
}

// The k highest of `score` [E], ties to the lower id, into `out`.
void top_k(const std::vector<double>& score, int64_t k, std::vector<int32_t>& order, std::vector<int32_t>& out) {
  std::iota(order.begin(), order.end(), 0);
  std::partial_sort(order.begin(), order.begin() + k, order.end(),
                    [&](int32_t a, int32_t b) { return score[a] != score[b] ? score[a] > score[b] : a < b; });
  out.assign(order.begin(), order.begin() + k);
}

// Per step (b, l): the first step after b's window.
std::vector<int64_t> window_horizons(const Schedule& s, int64_t layers) {
  std::vector<int64_t> h;
  h.reserve(s.batches() * layers);
  for (size_t w = 0; w + 1 < s.window_start.size(); ++w)
    for (int64_t b = s.window_start[w]; b < s.window_start[w + 1]; ++b) h.insert(h.end(), layers, s.window_start[w + 1] * layers);
  return h;
}

constexpr double kFloor = 1e-12;  // a probability below this counts as this (so no evidence zeroes an expert)

}  // namespace

RoutePredictor::RoutePredictor(const RoutingTrace& t, const Schedule& profile)
    : layers_(t.layers), experts_(t.experts) {
  const int64_t L = layers_, E = experts_, k = t.topk;
  popularity_.assign(L * E, 0.0);
  // The tables count in place (floats: exact to 2^24 per cell), then become probabilities.
  transition_.assign((L > 1 ? L - 1 : 0) * E * E, 0.f);
  temporal_.assign(L * E * E, 0.f);
  std::vector<double> from(L * E, 0.0), before(L * E, 0.0);
  std::vector<uint64_t> by_id;  // (vocabulary id << 32) | layer * E + expert, per profiled route entry
  for (const int64_t tok : profile.tokens) {
    const bool has_previous = !first_of_sequence(t, tok);
    const int32_t v = t.vocab_id(tok);
    for (int64_t l = 0; l < L; ++l) {
      const int32_t* r = t.experts_of(tok, l);
      for (int64_t j = 0; j < k; ++j) {
        popularity_[l * E + r[j]] += 1;
        if (v >= 0) by_id.push_back(static_cast<uint64_t>(v) << 32 | static_cast<uint64_t>(l * E + r[j]));
        if (has_previous) {
          const int32_t x = t.experts_of(tok - 1, l)[j];
          before[l * E + x] += 1;
          for (int64_t i = 0; i < k; ++i) temporal_[(l * E + x) * E + r[i]] += 1;
        }
        if (l + 1 == L) continue;
        from[l * E + r[j]] += 1;
        const int32_t* next = t.experts_of(tok, l + 1);
        for (int64_t i = 0; i < k; ++i) transition_[(l * E + r[j]) * E + next[i]] += 1;
      }
    }
  }
  if (profile.tokens.empty()) std::fill(popularity_.begin(), popularity_.end(), 1.0);
  // prior(e) = popularity of e at l / tokens of l; T[l][e][e'] = (pairs + k * prior(e')) / (from + 1):
  // add-one smoothing toward the layer's popularity, so an unseen e predicts the prior. M and the id
  // tables are smoothed the same way toward prior_, the add-one-smoothed popularity (never zero).
  std::vector<double> raw(L * E);
  prior_.assign(L * E, 0.0);
  for (int64_t l = 0; l < L; ++l) {
    double total = 0;
    for (int64_t e = 0; e < E; ++e) total += popularity_[l * E + e];
    for (int64_t e = 0; e < E; ++e) {
      raw[l * E + e] = popularity_[l * E + e] / total;
      prior_[l * E + e] = (popularity_[l * E + e] + 1) / (total + static_cast<double>(E));
    }
  }
  for (int64_t l = 0; l + 1 < L; ++l)
    for (int64_t e = 0; e < E; ++e)
      for (int64_t n = 0; n < E; ++n) {
        float& x = transition_[(l * E + e) * E + n];
        x = static_cast<float>(std::min(1.0, (x + k * raw[(l + 1) * E + n]) / (from[l * E + e] + 1)));
      }
  for (int64_t l = 0; l < L; ++l)
    for (int64_t x = 0; x < E; ++x)
      for (int64_t n = 0; n < E; ++n) {
        float& m = temporal_[(l * E + x) * E + n];
        m = static_cast<float>((m + k * prior_[l * E + n]) / ((before[l * E + x] + 1) * k));
      }
  // P(e | id) / prior(e) = ((count + k * prior) / ((tokens + 1) * k)) / prior: within a layer, an
  // expert the id never met and one it met c times differ by the factor 1 + c / (k * prior); only those
  // factors are kept (the rest is the same for every expert of the layer and cancels).
  std::sort(by_id.begin(), by_id.end());
  for (size_t i = 0; i < by_id.size();) {
    size_t j = i;
    while (j < by_id.size() && by_id[j] == by_id[i]) ++j;
    const auto id = static_cast<int32_t>(by_id[i] >> 32);
    const auto key = static_cast<int32_t>(by_id[i] & 0xffffffffu);
    auto& [first, last] = token_.try_emplace(id, id_factor_.size(), id_factor_.size()).first->second;
    id_factor_.push_back({key, static_cast<float>(1.0 + static_cast<double>(j - i) / (k * prior_[key]))});
    last = id_factor_.size();
    i = j;
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

std::vector<int32_t> RoutePredictor::path(const RoutingTrace& t, int64_t token, bool previous_known) const {
  const int64_t L = layers_, E = experts_, k = t.topk;
  previous_known = previous_known && !first_of_sequence(t, token);
  const auto id = token_.find(t.vocab_id(token));
  size_t factor = id == token_.end() ? 0 : id->second.first;
  const size_t factors_end = id == token_.end() ? 0 : id->second.second;
  std::vector<int32_t> keys, current(t.experts_of(token, 0), t.experts_of(token, 0) + k), order(E);
  keys.reserve(L * k);
  std::vector<double> weight(k, 1.0 / static_cast<double>(k)), score(E);
  for (int64_t l = 0;; ++l) {
    for (const int32_t e : current) keys.push_back(static_cast<int32_t>(l * E + e));
    if (l + 1 == L) break;
    const int64_t n = l + 1;
    std::fill(score.begin(), score.end(), 0.0);
    for (int64_t j = 0; j < k; ++j)
      for (int64_t e = 0; e < E; ++e) score[e] += weight[j] * transition_[(l * E + current[j]) * E + e];
    const double chain = std::accumulate(score.begin(), score.end(), 0.0);
    for (double& x : score) x = std::max(x / chain, kFloor);
    for (; factor < factors_end && id_factor_[factor].key < (n + 1) * E; ++factor)
      if (id_factor_[factor].key >= n * E) score[id_factor_[factor].key - n * E] *= id_factor_[factor].factor;
    if (previous_known) {
      const int32_t* before = t.experts_of(token - 1, n);
      for (int64_t e = 0; e < E; ++e) {
        double m = 0;
        for (int64_t j = 0; j < k; ++j) m += temporal_[(n * E + before[j]) * E + e];
        score[e] *= std::max(m / static_cast<double>(k), kFloor) / prior_[n * E + e];
      }
    }
    top_k(score, k, order, current);
    double z = 0;
    for (int64_t j = 0; j < k; ++j) z += weight[j] = score[current[j]];
    for (double& w : weight) w /= z;
  }
  return keys;
}

std::vector<std::vector<int32_t>> RoutePredictor::paths(const RoutingTrace& t, const Schedule& s) const {
  std::vector<int64_t> window_of(t.tokens(), -1);
  for (size_t w = 0; w + 1 < s.window_start.size(); ++w)
    for (int64_t i = s.batch_start[s.window_start[w]]; i < s.batch_start[s.window_start[w + 1]]; ++i)
      window_of[s.tokens[i]] = static_cast<int64_t>(w);
  std::vector<std::vector<int32_t>> out(s.tokens.size());
  for (size_t i = 0; i < s.tokens.size(); ++i) {
    const int64_t tok = s.tokens[i];
    const bool known = !first_of_sequence(t, tok) && window_of[tok - 1] >= 0 && window_of[tok - 1] < window_of[tok];
    out[i] = path(t, tok, known);
  }
  return out;
}

PredictedUses make_predicted_uses(const RoutingTrace& t, const Schedule& s, const RoutePredictor& p) {
  return make_predicted_uses(s, p.paths(t, s), t.layers, t.experts);
}

PredictedUses make_predicted_uses(const Schedule& s, const std::vector<std::vector<int32_t>>& paths, int64_t layers,
                                  int64_t experts) {
  const int64_t L = layers, E = experts;
  PredictedUses u;
  u.predicted.layers = L;
  u.predicted.experts = E;
  std::vector<uint32_t> mark(L * E, 0);
  uint32_t stamp = 0;
  for (size_t w = 0; w + 1 < s.window_start.size(); ++w) {
    for (int64_t b = s.window_start[w]; b < s.window_start[w + 1]; ++b) {
      for (int64_t l = 0; l < L; ++l) {
        ++stamp;
        const size_t first = u.predicted.expert.size();
        for (int64_t i = s.batch_start[b]; i < s.batch_start[b + 1]; ++i) {
          const size_t k = paths[i].size() / L;
          for (size_t j = l * k; j < (l + 1) * k; ++j)
            if (const int32_t key = paths[i][j]; mark[key] != stamp) mark[key] = stamp, u.predicted.expert.push_back(key % E);
        }
        std::sort(u.predicted.expert.begin() + first, u.predicted.expert.end());
        u.predicted.step_start.push_back(u.predicted.expert.size());
      }
    }
  }
  u.horizon = window_horizons(s, L);
  return u;
}

PredictedUses true_uses(const LookupStream& lookups, const Schedule& s) {
  return {lookups, window_horizons(s, lookups.layers)};
}


}  // namespace mlsb::moe_offload
