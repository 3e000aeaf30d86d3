#include "workloads/moe_offload/synthetic_trace.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <stdexcept>

namespace mlsb::moe_offload {
namespace {

void check_spec(const SyntheticTraceSpec& s) {
  auto positive = [](int64_t v, const char* axis) {
    if (v < 1) throw std::invalid_argument(std::string(axis) + ": must be >= 1");
  };
  positive(s.layers, "layers");
  positive(s.experts, "experts");
  positive(s.topk, "topk");
  positive(s.sequences, "sequences");
  positive(s.seq_len, "seq_len");
  if (s.topk > s.experts)
    throw std::invalid_argument("topk: " + std::to_string(s.topk) + " exceeds experts (" + std::to_string(s.experts) + ")");
  if (!(s.zipf >= 0) || !std::isfinite(s.zipf)) throw std::invalid_argument("zipf: must be a finite number >= 0");
  if (!(s.locality >= 0 && s.locality <= 1)) throw std::invalid_argument("locality: must be in [0, 1]");
  if (!(s.correlation >= 0 && s.correlation <= 1)) throw std::invalid_argument("correlation: must be in [0, 1]");
}

// An expert from the popularity that is not among chosen[0, n): a few rejection draws, then an exact
// draw from the popularity renormalised over the unchosen ones (a steep Zipf makes rejection hopeless).
int32_t draw_unchosen(std::discrete_distribution<int32_t>& popularity, const int32_t* chosen, int64_t n,
                      std::mt19937_64& rng) {
  auto taken = [&](int32_t e) { return std::find(chosen, chosen + n, e) != chosen + n; };
  for (int attempt = 0; attempt < 16; ++attempt)
    if (const int32_t e = popularity(rng); !taken(e)) return e;
  std::vector<double> w = popularity.probabilities();
  for (int64_t j = 0; j < n; ++j) w[chosen[j]] = 0;
  if (std::all_of(w.begin(), w.end(), [](double x) { return x == 0; }))  // underflowed: uniform over the rest
    for (size_t e = 0; e < w.size(); ++e) w[e] = taken(static_cast<int32_t>(e)) ? 0 : 1;
  return std::discrete_distribution<int32_t>(w.begin(), w.end())(rng);
}

}  // namespace

RoutingTrace synthetic_trace(const SyntheticTraceSpec& spec) {
  check_spec(spec);
  const int64_t L = spec.layers, E = spec.experts, k = spec.topk;
  std::mt19937_64 rng(spec.seed);
  // Popularity: Zipf weights over a random permutation of the experts, per layer.
  std::vector<std::discrete_distribution<int32_t>> popularity;
  std::vector<std::vector<int32_t>> next_of(L);  // the layer-to-layer map: expert at l -> expert at l+1
  for (int64_t l = 0; l < L; ++l) {
    std::vector<int32_t> order(E);
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
    std::vector<double> w(E);
    for (int64_t r = 0; r < E; ++r) w[order[r]] = 1.0 / std::pow(static_cast<double>(r + 1), spec.zipf);
    popularity.emplace_back(w.begin(), w.end());
    next_of[l].resize(E);
    for (auto& e : next_of[l]) e = static_cast<int32_t>(rng() % E);
  }
  std::uniform_real_distribution<double> u(0, 1);
  std::normal_distribution<float> logit(0, 1);

  RoutingTrace t;
  t.layers = L;
  t.experts = E;
  t.topk = k;
  const int64_t tokens = spec.sequences * spec.seq_len;
  t.route.resize(tokens * L * k);
  t.weights.resize(t.route.size());
  t.seq_start.clear();
  for (int64_t s = 0; s <= spec.sequences; ++s) t.seq_start.push_back(s * spec.seq_len);
  for (int64_t tok = 0; tok < tokens; ++tok) {
    const bool first_of_seq = tok % spec.seq_len == 0;
    for (int64_t l = 0; l < L; ++l) {
      int32_t* route = &t.route[(tok * L + l) * k];
      for (int64_t j = 0; j < k; ++j) {
        int32_t e = -1;
        if (!first_of_seq && u(rng) < spec.locality) e = t.route[((tok - 1) * L + l) * k + j];
        else if (l > 0 && u(rng) < spec.correlation) e = next_of[l - 1][t.route[(tok * L + l - 1) * k + j]];
        if (e < 0 || std::find(route, route + j, e) != route + j) e = draw_unchosen(popularity[l], route, j, rng);
        route[j] = e;
      }
      // Weights: softmax of decreasing logits.
      float* w = &t.weights[(tok * L + l) * k];
      std::vector<float> z(k);
      for (auto& x : z) x = logit(rng);
      std::sort(z.begin(), z.end(), std::greater<>());
      const float zmax = z[0];
      float sum = 0;
      for (int64_t j = 0; j < k; ++j) sum += (w[j] = std::exp(z[j] - zmax));
      for (int64_t j = 0; j < k; ++j) w[j] /= sum;
    }
  }
  t.source = {{"generator", "synthetic"}, {"layers", L},       {"experts", E},
              {"topk", k},                {"sequences", spec.sequences}, {"seq_len", spec.seq_len},
              {"zipf", spec.zipf},        {"locality", spec.locality},   {"correlation", spec.correlation},
              {"seed", spec.seed}};
  return t;
}

}  // namespace mlsb::moe_offload
