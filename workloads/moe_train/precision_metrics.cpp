#include "workloads/moe_train/precision_metrics.hpp"

#include <cmath>
#include <string>

namespace mlsb::moe_train {
namespace {

using precision::Pass;
using precision::QuantCounts;
using precision::Role;

double fraction(int64_t part, int64_t whole) { return whole > 0 ? static_cast<double>(part) / whole : 0.0; }

const QuantCounts& of(const precision::SiteStats& s, Role r) { return s.operands[static_cast<int>(r)]; }

constexpr const char* kPassErrorMetrics[3] = {"fprop_rel_err", "dgrad_rel_err", "wgrad_rel_err"};  // by Pass

}  // namespace

void record_precision(State& state, const precision::Precision& p, const precision::ActivationStore& store,
                      int64_t steps) {
  const double per_step = 1e-6 / static_cast<double>(steps > 0 ? steps : 1);
  if (store.storage() != precision::ActivationStorage::Full) {
    state.record("saved_activation_mb", store.stored_bytes() * per_step);
    state.record("saved_activation_ratio", store.stored_bytes() / store.full_bytes());
    state.record("saved_activation_bits", store.mean_element_bits());
  }
  if (p.sites().empty()) return;
  const precision::SiteStats t = p.total();
  for (int i = 0; i < 3; ++i)
    if (t.checked[i] > 0) state.record(kPassErrorMetrics[i], t.rel_err(static_cast<Pass>(i)));
  state.record("input_underflow", fraction(of(t, Role::Input).underflow, of(t, Role::Input).values));
  state.record("weight_underflow", fraction(of(t, Role::Weight).underflow, of(t, Role::Weight).values));
  state.record("grad_underflow", fraction(of(t, Role::Grad).underflow, of(t, Role::Grad).values));
  QuantCounts all;
  for (const auto& c : t.operands) all.add(c);
  state.record("saturated_fraction", fraction(all.saturated, all.values));
  state.record("activation_mb", of(t, Role::Input).bytes * per_step);
  state.record("weight_mb", of(t, Role::Weight).bytes * per_step);
  state.record("gradient_mb", of(t, Role::Grad).bytes * per_step);
}

void add_site_items(State& state, const precision::Precision& p) {
  for (const auto& site : p.sites()) {
    const precision::SiteStats& s = site->stats();
    if (s.operands[0].values + s.operands[1].values + s.operands[2].values == 0) continue;  // never ran
    nlohmann::json item = {{"recipe", std::string(precision::name_of(site->recipe()))}};
    for (int i = 0; i < 3; ++i) {
      const double e = s.rel_err(static_cast<Pass>(i));
      if (std::isfinite(e)) item[kPassErrorMetrics[i]] = e;
    }
    const char* const roles[3] = {"input", "weight", "grad"};
    for (int r = 0; r < 3; ++r) {
      item[std::string(roles[r]) + "_underflow"] = fraction(s.operands[r].underflow, s.operands[r].values);
      item[std::string(roles[r]) + "_saturated"] = fraction(s.operands[r].saturated, s.operands[r].values);
    }
    state.add_item("gemm_error/" + site->name(), item);
  }
}

}  // namespace mlsb::moe_train
