#pragma once
// Per-token router arithmetic of the CUDA routing kernels (routing.cu), written once for the device and
// the host so that tests/gpu checks it on the CPU against route() / route_backward() (the oracle,
// workloads/moe_train/router.hpp) without a GPU. fp32 throughout, in the oracle's order of operations
// (expf/logf and IEEE division on both sides: nvcc's defaults, no fast math), so choices agree exactly
// and values to rounding. Rows are one token's E values, row-major pointers into [tokens, E] tensors.
#include <math.h>

#include <cstdint>

#include "backends/cuda/host_device.hpp"
#include "workloads/common/activations.hpp"
#include "workloads/moe_train/config.hpp"

namespace mlsb::moe_train::gpu::math {

/// The routing rules a kernel needs (from MoeConfig).
struct RouteShape {
  int experts = 0, topk = 0, groups = 1, group_topk = 1;
  RouterKind router = RouterKind::TopkSoftmax;
};

/// The selection order: higher score first, ties to the lower index.
MLSB_HD bool precedes(float a, int ia, float b, int ib) { return a > b || (a == b && ia < ib); }

struct AllowAll {
  MLSB_HD bool operator()(int) const { return true; }
};

/// Experts of the chosen groups: group q is chosen when it does not come after the last chosen group
/// (last_score, last) in `precedes` order of the group scores.
struct AllowGroups {
  const float* group_score;
  int per_group, last;
  float last_score;
  MLSB_HD bool operator()(int i) const {
    const int q = i / per_group;
    return !precedes(last_score, last, group_score[q], q);
  }
};

/// The first index of score[0, n), among `allowed`, that follows (prev_score, prev) in `precedes` order
/// (prev < 0: the very first). Calling it k times walks the top k. -1 when none is left.
template <class Allowed>
MLSB_HD int next_in_order(const float* score, int n, int prev, float prev_score, const Allowed& allowed) {
  int best = -1;
  float best_score = 0;
  for (int i = 0; i < n; ++i) {
    if (!allowed(i)) continue;
    const float v = score[i];
    if (prev >= 0 && !precedes(prev_score, prev, v, i)) continue;
    if (best < 0 || precedes(v, i, best_score, best)) best = i, best_score = v;
  }
  return best;
}

/// Routes one token: l = its logits [E]; bias [E] or nullptr (Sigmoid only). Writes s = scores [E],
/// p = aux probabilities [E], sel = selection scores [E] (scratch), group_score [groups] (scratch, used
/// when groups > 1), expert [k] (by decreasing selection score) and weight [k]. Returns logsumexp(l).
MLSB_HD float route_token(const RouteShape& sh, const float* l, const float* bias, float* s, float* p, float* sel,
                          float* group_score, int32_t* expert, float* weight) {
  const int E = sh.experts, k = sh.topk;
  float mx = l[0];
  for (int i = 1; i < E; ++i)
    if (l[i] > mx) mx = l[i];
  float sum = 0;
  for (int i = 0; i < E; ++i) sum += p[i] = expf(l[i] - mx);
  for (int i = 0; i < E; ++i) p[i] /= sum;
  const float lse = mx + logf(sum);
  if (sh.router == RouterKind::Sigmoid) {
    float ssum = 0;
    for (int i = 0; i < E; ++i) ssum += s[i] = common::sigmoid(l[i]);
    for (int i = 0; i < E; ++i) {
      p[i] = ssum > 0 ? s[i] / ssum : 1.0f / static_cast<float>(E);  // every score underflowed: uniform, never 0/0
      sel[i] = s[i] + (bias ? bias[i] : 0.0f);
    }
  } else {
    for (int i = 0; i < E; ++i) {
      s[i] = p[i];
      sel[i] = sh.router == RouterKind::TopkSoftmax ? l[i] : p[i];
    }
  }
  int prev = -1;
  float prev_score = 0;
  if (sh.groups > 1) {
    const int per = E / sh.groups, take = k / sh.group_topk;
    for (int q = 0; q < sh.groups; ++q) {
      const float* sq = sel + q * per;
      float acc = 0;
      int j_prev = -1;
      float j_score = 0;
      for (int j = 0; j < take; ++j) {
        j_prev = next_in_order(sq, per, j_prev, j_score, AllowAll{});
        j_score = sq[j_prev];
        acc += j_score;
      }
      group_score[q] = acc;
    }
    for (int j = 0; j < sh.group_topk; ++j) {
      prev = next_in_order(group_score, sh.groups, prev, prev_score, AllowAll{});
      prev_score = group_score[prev];
    }
    const AllowGroups allowed{group_score, per, prev, prev_score};
    prev = -1;
    for (int j = 0; j < k; ++j) {
      const int i = next_in_order(sel, E, prev, prev_score, allowed);
      expert[j] = i < 0 ? 0 : i;  // i < 0 only for NaN scores (validate() guarantees k allowed experts)
      prev = expert[j], prev_score = sel[prev];
    }
  } else {
    for (int j = 0; j < k; ++j) {
      const int i = next_in_order(sel, E, prev, prev_score, AllowAll{});
      expert[j] = i < 0 ? 0 : i;
      prev = expert[j], prev_score = sel[prev];
    }
  }
  if (sh.router == RouterKind::TopkSoftmax) {
    float m = l[expert[0]];
    for (int j = 1; j < k; ++j)
      if (l[expert[j]] > m) m = l[expert[j]];
    float wsum = 0;
    for (int j = 0; j < k; ++j) wsum += weight[j] = expf(l[expert[j]] - m);
    for (int j = 0; j < k; ++j) weight[j] /= wsum;
  } else {
    float wsum = 0;
    for (int j = 0; j < k; ++j) wsum += weight[j] = s[expert[j]];
    if (sh.router == RouterKind::Sigmoid)  // chosen scores that all underflow: equal weights
      for (int j = 0; j < k; ++j) weight[j] = wsum > 0 ? weight[j] / wsum : 1.0f / static_cast<float>(k);
  }
  return lse;
}

/// One token's routing state and upstream gradients for the backward.
struct TokenGrad {
  const int32_t* expert;  ///< [k]
  const float* weight;    ///< [k]
  const float* dweight;   ///< [k] d(loss)/d(weight); 0 for dropped assignments
  const float* s;         ///< [E] scores
  const float* p;         ///< [E] aux probabilities
  const float* l;         ///< [E] logits
  float lse;
  const float* daux;      ///< [E] d(aux loss)/d(aux_probs[t, i]) (same for every token)
  float z_scale;          ///< 2 * z_coef / tokens (0: no z-loss)
  bool aux;               ///< aux_coef > 0
};

/// The token's sums every dlogit needs.
struct TokenDots {
  float dot = 0, sum_sel = 0, dot_aux = 0, sum_s = 0;
};

MLSB_HD TokenDots token_dots(const RouteShape& sh, const TokenGrad& g) {
  TokenDots d;
  const int E = sh.experts, k = sh.topk;
  if (sh.router == RouterKind::SoftmaxTopk) {
    for (int j = 0; j < k; ++j) d.dot += g.s[g.expert[j]] * g.dweight[j];
  } else {
    for (int j = 0; j < k; ++j) {
      d.dot += g.weight[j] * g.dweight[j];
      if (sh.router == RouterKind::Sigmoid) d.sum_sel += g.s[g.expert[j]];
    }
  }
  if (g.aux) {
    for (int i = 0; i < E; ++i) d.dot_aux += g.p[i] * g.daux[i];
    if (sh.router == RouterKind::Sigmoid)
      for (int i = 0; i < E; ++i) d.sum_s += g.s[i];
  }
  return d;
}

/// d(loss)/d(logit i) of one token: combine weights (selection held constant), aux loss and z-loss.
MLSB_HD float token_dlogit(const RouteShape& sh, const TokenGrad& g, const TokenDots& d, int i) {
  int j = -1;
  for (int q = 0; q < sh.topk; ++q)
    if (g.expert[q] == i) j = q;
  const float si = g.s[i];
  float out = 0;
  if (sh.router == RouterKind::SoftmaxTopk) {
    out += si * ((j >= 0 ? g.dweight[j] : 0.0f) - d.dot);
  } else if (j >= 0) {
    if (sh.router == RouterKind::TopkSoftmax)
      out += g.weight[j] * (g.dweight[j] - d.dot);
    else if (d.sum_sel > 0)  // 0: the scores underflowed, the weights are constant (no gradient)
      out += (g.dweight[j] - d.dot) / d.sum_sel * si * (1.0f - si);
  }
  if (g.aux) {
    if (sh.router == RouterKind::Sigmoid) {
      if (d.sum_s > 0) out += (g.daux[i] - d.dot_aux) / d.sum_s * si * (1.0f - si);
    } else {
      out += g.p[i] * (g.daux[i] - d.dot_aux);
    }
  }
  if (g.z_scale != 0) out += g.z_scale * g.lse * expf(g.l[i] - g.lse);
  return out;
}

}  // namespace mlsb::moe_train::gpu::math
