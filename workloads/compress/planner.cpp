#include "workloads/compress/planner.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>

#include "workloads/compress/link_model.hpp"

namespace mlsb::compress {
namespace {

double option_time(const OptionCost& o, double link_gbps) {
  return modelled_step_s(o.compress_s, o.wire_bytes, o.decompress_s, link_gbps);
}

constexpr int kUnits = 4096;  // the error budget's resolution

}  // namespace

std::vector<CodecConfig> plan_candidates(DType dtype) {
  std::vector<CodecConfig> c;
  auto add = [&](std::string name, auto&& tweak) {
    CodecConfig k;
    k.name = std::move(name);
    k.error_feedback = false;
    tweak(k);
    c.push_back(k);
  };
  auto keep = [](CodecConfig&) {};
  add("none", keep);
  add("exponent", keep);
  add("zstd", [](CodecConfig& k) { k.level = 1; });
  if (dtype == DType::F32) add("cast-bf16", keep);
  add("int8-block", keep);
  add("fp8-e4m3", keep);
  add("topk", [](CodecConfig& k) { k.density = 0.1; });
  add("topk", [](CodecConfig& k) { k.density = 0.01; });
  add("powersgd", [](CodecConfig& k) { k.rank = 4; });
  return c;
}

Plan choose_plan(const std::vector<TensorCosts>& t, double link, double budget) {
  if (!(link > 0)) throw std::invalid_argument("link_gbps: the planner needs a link bandwidth > 0");
  if (!(budget >= 0)) throw std::invalid_argument("error_budget: must be >= 0");
  double norm2 = 0;
  for (const auto& x : t) norm2 += x.norm2;
  const double allowed = budget * budget * norm2;
  const double unit = allowed / kUnits;
  // Error units of an option, or -1 when it does not fit the budget at all.
  auto units = [&](const OptionCost& o) -> int {
    if (o.sq_error == 0) return 0;
    if (!(unit > 0) || !(o.sq_error <= allowed)) return -1;
    return static_cast<int>(std::min<double>(kUnits, std::ceil(o.sq_error / unit)));
  };
  // best[b]: the least time of the tensors so far using at most b units; pick[i][b] the option taken.
  std::vector<double> best(kUnits + 1, 0.0), next(kUnits + 1);
  std::vector<std::vector<uint8_t>> pick(t.size(), std::vector<uint8_t>(kUnits + 1, 0));
  for (size_t i = 0; i < t.size(); ++i) {
    std::fill(next.begin(), next.end(), INFINITY);
    for (size_t o = 0; o < t[i].options.size() && o < 256; ++o) {
      const int c = units(t[i].options[o]);
      const double time = option_time(t[i].options[o], link);
      if (c < 0 || !std::isfinite(time)) continue;
      for (int b = c; b <= kUnits; ++b)
        if (best[b - c] + time < next[b]) next[b] = best[b - c] + time, pick[i][b] = static_cast<uint8_t>(o);
    }
    best.swap(next);
  }
  Plan p;
  p.choice.assign(t.size(), 0);
  int b = kUnits;
  double err = 0;
  for (size_t i = t.size(); i-- > 0;) {
    p.choice[i] = pick[i][b];
    const OptionCost& o = t[i].options[p.choice[i]];
    b -= units(o);
    p.predicted_s += option_time(o, link);
    err += o.sq_error;
  }
  p.rel_error = norm2 > 0 ? std::sqrt(err / norm2) : 0;
  return p;
}

}  // namespace mlsb::compress
