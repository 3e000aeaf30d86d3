#include "workloads/compress/planner.hpp"

#include <cmath>
#include <stdexcept>

#include "workloads/compress/link_model.hpp"

namespace mlsb::compress {
namespace {

double option_time(const OptionCost& o, double link_gbps) {
  return modelled_step_s(o.compress_s, o.wire_bytes, o.decompress_s, link_gbps);
}

struct Totals {
  double time = 0, error = 0;
};

Totals totals(const std::vector<TensorCosts>& t, const std::vector<size_t>& choice, double link) {
  Totals s;
  for (size_t i = 0; i < t.size(); ++i) {
    s.time += option_time(t[i].options[choice[i]], link);
    s.error += t[i].options[choice[i]].sq_error;
  }
  return s;
}

std::vector<size_t> pick(const std::vector<TensorCosts>& t, double lambda, double link) {
  std::vector<size_t> choice(t.size(), 0);
  for (size_t i = 0; i < t.size(); ++i) {
    double best = INFINITY;
    for (size_t o = 0; o < t[i].options.size(); ++o) {
      const double cost = option_time(t[i].options[o], link) + lambda * t[i].options[o].sq_error;
      if (cost < best) best = cost, choice[i] = o;
    }
  }
  return choice;
}

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
  auto feasible = [&](const std::vector<size_t>& c) { return totals(t, c, link).error <= allowed; };

  std::vector<size_t> best = pick(t, 0, link);
  if (!feasible(best)) {
    double lo = 0, hi = 1;
    while (!feasible(pick(t, hi, link)) && hi < 1e300) hi *= 16;
    for (int i = 0; i < 200 && hi > lo * (1 + 1e-12); ++i) {
      const double mid = lo == 0 ? hi / 1024 : std::sqrt(lo * hi);
      (feasible(pick(t, mid, link)) ? hi : lo) = mid;
      if (lo == 0 && hi < 1e-300) break;
    }
    best = pick(t, hi, link);
    if (!feasible(best)) best.assign(t.size(), 0);  // candidate 0 is lossless
  }
  // Greedy: take the single switch with the largest time saving that stays within the budget, repeat.
  for (bool improved = true; improved;) {
    improved = false;
    const Totals now = totals(t, best, link);
    double gain = 0;
    size_t gi = 0, go = 0;
    for (size_t i = 0; i < t.size(); ++i)
      for (size_t o = 0; o < t[i].options.size(); ++o) {
        const auto& cur = t[i].options[best[i]];
        const auto& alt = t[i].options[o];
        const double saving = option_time(cur, link) - option_time(alt, link);
        if (saving > gain && now.error - cur.sq_error + alt.sq_error <= allowed) gain = saving, gi = i, go = o;
      }
    if (gain > 0) best[gi] = go, improved = true;
  }
  Plan p;
  p.choice = best;
  const Totals s = totals(t, best, link);
  p.predicted_s = s.time;
  p.rel_error = norm2 > 0 ? std::sqrt(s.error / norm2) : 0;
  return p;
}

}  // namespace mlsb::compress
