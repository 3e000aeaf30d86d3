#pragma once
// What moe_train.lm and moe_train.layer record of a low-precision recipe's GEMMs (precision/).
#include <cstdint>

#include "harness/workload.hpp"
#include "workloads/moe_train/precision/precision.hpp"

namespace mlsb::moe_train {

/// Records, over all quantised sites: fprop_rel_err, dgrad_rel_err, wgrad_rel_err (where a checked call exists),
/// input_underflow, weight_underflow, grad_underflow, saturated_fraction, and activation_mb, weight_mb,
/// gradient_mb per step (totals over `steps` steps), none of them for fp32 (no sites); and, for a quantised storage,
/// saved_activation_mb per step, saved_activation_ratio and saved_activation_bits from `store`.
void record_precision(State& state, const precision::Precision& p, const precision::ActivationStore& store,
                      int64_t steps);
/// One item per site that ran, "gemm_error/<site>", with its recipe, the three errors, and each role's underflow and
/// saturation fractions (call once per case: items are not replaced).
void add_site_items(State& state, const precision::Precision& p);

}  // namespace mlsb::moe_train
