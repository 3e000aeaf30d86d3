#include "workloads/moe_train/layer_check.hpp"

#include <algorithm>
#include <cmath>
#include <set>

namespace mlsb::moe_train {
namespace {

// SwiGLU expert of one token in double: sum_j silu(x.w_gate_j) * (x.w_up_j) * w2[j, :].
void expert_ref(const ExpertWeights<float>& w, const float* x, double scale, std::vector<double>& out) {
  const int64_t h = w.hidden, f = w.ffn;
  for (int64_t j = 0; j < f; ++j) {
    double g = 0, u = 0;
    for (int64_t i = 0; i < h; ++i) g += double(x[i]) * w.w13[i * 2 * f + j], u += double(x[i]) * w.w13[i * 2 * f + f + j];
    const double a = g / (1 + std::exp(-g)) * u * scale;
    for (int64_t i = 0; i < h; ++i) out[i] += a * w.w2[j * h + i];
  }
}

}  // namespace

std::string check_load_statistics(const Routing<float>& r, const DispatchPlan& p, const MoeConfig& c) {
  int64_t dropped = 0;
  for (int64_t e = 0; e < r.experts; ++e) {
    const int64_t n = std::count(r.expert.begin(), r.expert.end(), static_cast<int32_t>(e));
    if (n != r.load[e])
      return "expert " + std::to_string(e) + ": load " + std::to_string(r.load[e]) + ", recount " + std::to_string(n);
    const int64_t cap = expert_capacity(c, r.tokens);
    const int64_t kept = cap < 0 ? n : std::min(n, cap);
    if (p.offsets[e + 1] - p.offsets[e] != kept)
      return "expert " + std::to_string(e) + ": " + std::to_string(p.offsets[e + 1] - p.offsets[e]) +
             " rows, expected " + std::to_string(kept);
    dropped += n - kept;
  }
  if (dropped != p.dropped) return "dropped " + std::to_string(p.dropped) + ", recount " + std::to_string(dropped);
  return "";
}

std::string check_layer_output(const MoeLayer<float>& layer, const float* x, const float* y, uint64_t seed) {
  const MoeConfig& c = layer.config();
  const int64_t h = c.hidden, E = c.experts, k = c.topk, T = layer.routing().tokens;
  const auto& r = layer.routing();
  const auto& plan = layer.plan();
  const auto& router = layer.params().router;
  std::set<int64_t> tokens = {0, T / 2, T - 1};
  ExpertWeights<float> expert;
  for (int64_t t : tokens) {
    if (t < 0) continue;
    const float* xt = x + t * h;
    std::vector<double> logit(E, 0.0), sel(E), score(E);
    for (int64_t i = 0; i < h; ++i)
      for (int64_t e = 0; e < E; ++e) logit[e] += double(xt[i]) * router[i * E + e];
    const double m = *std::max_element(logit.begin(), logit.end());
    double z = 0;
    for (double l : logit) z += std::exp(l - m);
    for (int64_t e = 0; e < E; ++e) {
      score[e] = c.router == RouterKind::Sigmoid ? 1 / (1 + std::exp(-logit[e])) : std::exp(logit[e] - m) / z;
      sel[e] = c.router == RouterKind::TopkSoftmax ? logit[e] : score[e];
    }
    const int32_t* chosen = r.expert.data() + t * k;
    if (c.groups == 1) {
      double min_chosen = 1e300, max_other = -1e300;
      for (int64_t e = 0; e < E; ++e) {
        if (std::find(chosen, chosen + k, static_cast<int32_t>(e)) != chosen + k) min_chosen = std::min(min_chosen, sel[e]);
        else max_other = std::max(max_other, sel[e]);
      }
      if (min_chosen < max_other - 1e-5 * (1 + std::abs(max_other)))
        return "token " + std::to_string(t) + ": the chosen experts are not the top-k";
    }
    double norm = 0;
    for (int64_t j = 0; j < k; ++j)
      norm += c.router == RouterKind::TopkSoftmax ? std::exp(logit[chosen[j]] - m) : score[chosen[j]];
    std::vector<double> ref(h, 0.0);
    for (int64_t j = 0; j < k; ++j) {
      const int32_t e = chosen[j];
      double w = c.router == RouterKind::TopkSoftmax ? std::exp(logit[e] - m) / norm : score[e];
      if (c.router == RouterKind::Sigmoid) w /= norm;
      if (std::abs(w - r.weight[t * k + j]) > 1e-4)
        return "token " + std::to_string(t) + ": weight of expert " + std::to_string(e) + " is " +
               std::to_string(r.weight[t * k + j]) + ", expected " + std::to_string(w);
      if (plan.slot_row[t * k + j] < 0) continue;
      init_expert(seed, e, expert, h, c.ffn);
      expert_ref(expert, xt, w, ref);
    }
    if (layer.params().shared.experts) expert_ref(layer.params().shared, xt, 1.0, ref);
    double err = 0, norm_ref = 0;
    for (int64_t i = 0; i < h; ++i) err += std::pow(y[t * h + i] - ref[i], 2), norm_ref += ref[i] * ref[i];
    if (std::sqrt(err) > 1e-4 * std::sqrt(norm_ref) + 1e-6)
      return "token " + std::to_string(t) + ": relative L2 error " + std::to_string(std::sqrt(err / std::max(norm_ref, 1e-300)));
  }
  return "";
}

}  // namespace mlsb::moe_train
