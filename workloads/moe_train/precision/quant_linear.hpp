#pragma once
// One linear layer's GEMMs under a recipe (recipe.hpp): the operands of each pass quantised as the recipe says
// for their role (fprop: input x weight; dgrad: output gradient x weight^T; wgrad: input^T x output gradient),
// then multiplied with the recipe's accumulator (accumulate.hpp). The gradient through a quantised GEMM is the
// straight-through one: each backward GEMM reads the quantised operands of its own pass, as Transformer Engine's
// and DeepSeek-V3's linear layers do. Keeps per-role quantisation counts, per-tensor amax histories (delayed
// scaling; one per expert, as Transformer Engine's grouped linear keeps one per GEMM) and, on checked steps,
// each pass's error against the fp32 GEMM of the same unquantised inputs.
#include <array>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "backends/cpu/gemm.hpp"
#include "workloads/moe_train/precision/amax_history.hpp"
#include "workloads/moe_train/precision/quantize.hpp"

namespace mlsb::moe_train::precision {

/// A site's numbers since its creation.
struct SiteStats {
  std::array<QuantCounts, 3> operands;  ///< by Role: input, weight, grad
  std::array<double, 3> err2{}, ref2{};  ///< by Pass: sums of squared (quantised - fp32) and squared fp32 outputs
  std::array<int64_t, 3> checked{};      ///< by Pass: GEMM calls checked
  void add(const SiteStats& o);
  /// sqrt(err2 / ref2) of the pass: the relative Frobenius error of its outputs over the checked calls (NaN when
  /// none was checked).
  double rel_err(Pass pass) const;
};

class QuantLinear {
 public:
  /// `recipe` may differ from config.recipe (a block a recipe keeps in bf16). Throws what AmaxHistory throws.
  QuantLinear(std::string name, Recipe recipe, const PrecisionConfig& config);

  /// C = op(A) op(B) + beta C as cpu::gemm (row-major, op transposing when ta / tb), with A and B the `pass`'s
  /// operands (see above) of GEMM `instance` (an expert of a grouped GEMM; 0 otherwise).
  void gemm(Pass pass, int64_t instance, bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float* a,
            int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc);
  /// Whether the next GEMMs are checked against fp32 (an extra fp32 GEMM each).
  void set_checking(bool on) { checking_ = on; }
  /// End of a training step: delayed scaling's histories roll.
  void end_step();

  const std::string& name() const { return name_; }
  Recipe recipe() const { return recipe_; }
  const SiteStats& stats() const { return stats_; }
  /// Seconds spent in the checks (to leave out of a step's time).
  double check_seconds() const { return check_s_; }

 private:
  // The quantised operand (packed [rows, cols]) in buf; returns the packed operand.
  Operand prepare(Pass pass, Role role, int64_t instance, const Operand& src, std::vector<float>& buf);

  std::string name_;
  Recipe recipe_;
  PrecisionConfig config_;
  uint16_t signs_ = 0;
  uint64_t stream_ = 0;  // the site's stochastic-rounding stream (seed and name)
  uint64_t calls_ = 0;
  bool checking_ = false;
  double check_s_ = 0;
  std::vector<AmaxHistory> histories_;  // [instance * 3 + role], delayed scaling only
  SiteStats stats_;
  std::vector<float> qa_, qb_, ta_, tb_, out_, ref_;
};

/// cpu::gemm, or the site's quantised GEMM when T is float and `site` is set: how the model's linear layers call
/// their GEMMs (nullptr: fp32, today's path bit for bit).
template <typename T>
void linear_gemm(QuantLinear* site, Pass pass, int64_t instance, bool ta, bool tb, int64_t m, int64_t n, int64_t k,
                 const T* a, int64_t lda, const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
  if constexpr (std::is_same_v<T, float>) {
    if (site) {
      site->gemm(pass, instance, ta, tb, m, n, k, a, lda, b, ldb, beta, c, ldc);
      return;
    }
  }
  cpu::gemm<T>(ta, tb, m, n, k, T(1), a, lda, b, ldb, beta, c, ldc);
}

}  // namespace mlsb::moe_train::precision
