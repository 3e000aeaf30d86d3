#include "workloads/moe_train/router.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "workloads/common/activations.hpp"

namespace mlsb::moe_train {
namespace {

// Softmax of n values into out; returns their logsumexp.
template <typename T>
T softmax(const T* x, int64_t n, T* out) {
  const T m = *std::max_element(x, x + n);
  T sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += out[i] = std::exp(x[i] - m);
  for (int64_t i = 0; i < n; ++i) out[i] /= sum;
  return m + std::log(sum);
}

// Indices of the k largest of `score` among `allowed` (all when empty), by decreasing score, ties to
// the lower index.
template <typename T>
void top_k(const T* score, int64_t n, int64_t k, const std::vector<char>& allowed, std::vector<int32_t>& idx) {
  idx.clear();
  for (int32_t i = 0; i < n; ++i)
    if (allowed.empty() || allowed[i]) idx.push_back(i);
  auto better = [&](int32_t a, int32_t b) { return score[a] > score[b] || (score[a] == score[b] && a < b); };
  std::partial_sort(idx.begin(), idx.begin() + k, idx.end(), better);
  idx.resize(k);
}

// Group-limited routing: the experts of the group_topk groups whose top (k / group_topk) scores sum highest.
template <typename T>
std::vector<char> allowed_experts(const T* score, const MoeConfig& c) {
  if (c.groups <= 1) return {};
  const int64_t per = c.experts / c.groups, take = c.topk / c.group_topk;
  std::vector<T> group_score(c.groups);
  std::vector<T> tmp(per);
  for (int64_t g = 0; g < c.groups; ++g) {
    std::copy(score + g * per, score + (g + 1) * per, tmp.begin());
    std::partial_sort(tmp.begin(), tmp.begin() + take, tmp.end(), std::greater<T>());
    group_score[g] = std::accumulate(tmp.begin(), tmp.begin() + take, T(0));
  }
  std::vector<int32_t> chosen;
  top_k(group_score.data(), c.groups, c.group_topk, {}, chosen);
  std::vector<char> allowed(c.experts, 0);
  for (int32_t g : chosen) std::fill(allowed.begin() + g * per, allowed.begin() + (g + 1) * per, 1);
  return allowed;
}

}  // namespace

template <typename T>
Routing<T> route(const T* logits, int64_t tokens, const MoeConfig& c, const float* expert_bias) {
  const int64_t E = c.experts, k = c.topk;
  Routing<T> r;
  r.tokens = tokens, r.experts = E, r.topk = k;
  r.expert.resize(tokens * k);
  r.weight.resize(tokens * k);
  r.scores.resize(tokens * E);
  r.aux_probs.resize(tokens * E);
  r.lse.resize(tokens);
  r.load.assign(E, 0);
  std::vector<T> select(E);
  std::vector<int32_t> idx;
  for (int64_t t = 0; t < tokens; ++t) {
    const T* l = logits + t * E;
    T* s = r.scores.data() + t * E;
    T* p = r.aux_probs.data() + t * E;
    r.lse[t] = softmax(l, E, p);
    if (c.router == RouterKind::Sigmoid) {
      T sum = 0;
      for (int64_t i = 0; i < E; ++i) sum += s[i] = common::sigmoid(l[i]);
      // Scores that all underflow (logits far below 0) sum to 0: uniform probabilities, never 0/0.
      for (int64_t i = 0; i < E; ++i) {
        p[i] = sum > 0 ? s[i] / sum : T(1) / T(E);
        select[i] = s[i] + (expert_bias ? T(expert_bias[i]) : T(0));
      }
    } else {
      std::copy(p, p + E, s);
      std::copy(c.router == RouterKind::TopkSoftmax ? l : s, (c.router == RouterKind::TopkSoftmax ? l : s) + E,
                select.begin());
    }
    top_k(select.data(), E, k, allowed_experts(select.data(), c), idx);
    int32_t* e = r.expert.data() + t * k;
    T* w = r.weight.data() + t * k;
    std::copy(idx.begin(), idx.end(), e);
    if (c.router == RouterKind::TopkSoftmax) {
      std::vector<T> sel(k);
      for (int64_t j = 0; j < k; ++j) sel[j] = l[e[j]];
      softmax(sel.data(), k, w);
    } else {
      T sum = 0;
      for (int64_t j = 0; j < k; ++j) sum += w[j] = s[e[j]];
      if (c.router == RouterKind::Sigmoid)  // chosen scores that all underflow: equal weights
        for (int64_t j = 0; j < k; ++j) w[j] = sum > 0 ? w[j] / sum : T(1) / T(k);
    }
    for (int64_t j = 0; j < k; ++j) ++r.load[e[j]];
  }
  if (tokens > 0) {
    T aux = 0, z = 0;
    for (int64_t i = 0; i < E; ++i) {
      T P = 0;
      for (int64_t t = 0; t < tokens; ++t) P += r.aux_probs[t * E + i];
      aux += T(r.load[i]) / T(tokens * k) * (P / T(tokens));
    }
    for (int64_t t = 0; t < tokens; ++t) z += r.lse[t] * r.lse[t];
    r.aux_loss = T(c.aux_coef) * T(E) * aux;
    r.z_loss = T(c.z_coef) * z / T(tokens);
  }
  return r;
}

template <typename T>
void route_backward(const Routing<T>& r, const T* logits, const T* dweight, const MoeConfig& c, T* dlogits) {
  const int64_t E = r.experts, k = r.topk, tokens = r.tokens;
  std::fill(dlogits, dlogits + tokens * E, T(0));
  if (tokens == 0) return;
  // d aux / d aux_probs[t, i] = aux_coef * E * f_i / tokens (f_i is a count: not differentiable).
  std::vector<T> daux(E);
  for (int64_t i = 0; i < E; ++i)
    daux[i] = T(c.aux_coef) * T(E) * (T(r.load[i]) / T(tokens * k)) / T(tokens);
  std::vector<T> ds(E);
  for (int64_t t = 0; t < tokens; ++t) {
    const int32_t* e = r.expert.data() + t * k;
    const T* w = r.weight.data() + t * k;
    const T* dw = dweight + t * k;
    const T* s = r.scores.data() + t * E;
    const T* p = r.aux_probs.data() + t * E;
    T* dl = dlogits + t * E;
    // Combine weights.
    if (c.router == RouterKind::TopkSoftmax) {
      T dot = 0;
      for (int64_t j = 0; j < k; ++j) dot += w[j] * dw[j];
      for (int64_t j = 0; j < k; ++j) dl[e[j]] += w[j] * (dw[j] - dot);
    } else if (c.router == RouterKind::SoftmaxTopk) {
      std::fill(ds.begin(), ds.end(), T(0));
      for (int64_t j = 0; j < k; ++j) ds[e[j]] += dw[j];
      T dot = 0;
      for (int64_t i = 0; i < E; ++i) dot += s[i] * ds[i];
      for (int64_t i = 0; i < E; ++i) dl[i] += s[i] * (ds[i] - dot);
    } else {
      T sum = 0, dot = 0;
      for (int64_t j = 0; j < k; ++j) sum += s[e[j]], dot += w[j] * dw[j];
      // sum == 0: the scores underflowed, their sigmoids are flat and the weights constant (no gradient).
      for (int64_t j = 0; j < k && sum > 0; ++j) {
        const T dsj = (dw[j] - dot) / sum;
        dl[e[j]] += dsj * s[e[j]] * (T(1) - s[e[j]]);
      }
    }
    // Aux loss through aux_probs.
    if (c.aux_coef > 0) {
      T dot = 0;
      for (int64_t i = 0; i < E; ++i) dot += p[i] * daux[i];
      if (c.router == RouterKind::Sigmoid) {
        T sum = 0;
        for (int64_t i = 0; i < E; ++i) sum += s[i];
        for (int64_t i = 0; i < E && sum > 0; ++i) dl[i] += (daux[i] - dot) / sum * s[i] * (T(1) - s[i]);
      } else {
        for (int64_t i = 0; i < E; ++i) dl[i] += p[i] * (daux[i] - dot);
      }
    }
    // z-loss: d/dl_i of z_coef/tokens * lse^2 = 2 z_coef/tokens * lse * softmax_i.
    if (c.z_coef > 0) {
      const T scale = T(2 * c.z_coef) * r.lse[t] / T(tokens);
      for (int64_t i = 0; i < E; ++i) dl[i] += scale * std::exp(logits[t * E + i] - r.lse[t]);
    }
  }
}

void update_expert_bias(std::vector<float>& bias, const std::vector<int64_t>& load, double rate) {
  if (load.empty() || rate == 0) return;
  const double mean = std::accumulate(load.begin(), load.end(), 0.0) / static_cast<double>(load.size());
  for (size_t i = 0; i < bias.size(); ++i) {
    const double d = mean - static_cast<double>(load[i]);
    bias[i] += static_cast<float>(rate * ((d > 0) - (d < 0)));
  }
}

template Routing<float> route(const float*, int64_t, const MoeConfig&, const float*);
template Routing<double> route(const double*, int64_t, const MoeConfig&, const float*);
template void route_backward(const Routing<float>&, const float*, const float*, const MoeConfig&, float*);
template void route_backward(const Routing<double>&, const double*, const double*, const MoeConfig&, double*);

}  // namespace mlsb::moe_train
