#include "workloads/moe_train/precision/quant_linear.hpp"

#include <cmath>
#include <functional>
#include <limits>

#include "util/clock.hpp"
#include "harness/workload.hpp"
#include "workloads/moe_train/precision/accumulate.hpp"

namespace mlsb::moe_train::precision {
namespace {

constexpr Role kRoleA[3] = {Role::Input, Role::Grad, Role::Input};    // by Pass
constexpr Role kRoleB[3] = {Role::Weight, Role::Weight, Role::Grad};  // by Pass

// op(src) of a packed [rows, cols] matrix as packed [cols, rows] (when `transpose`), else src itself.
const float* canonical(const float* src, int64_t rows, int64_t cols, bool transpose, std::vector<float>& buf) {
  if (!transpose) return src;
  buf.resize(static_cast<size_t>(rows * cols));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) buf[c * rows + r] = src[r * cols + c];
  return buf.data();
}

}  // namespace

void SiteStats::add(const SiteStats& o) {
  for (int i = 0; i < 3; ++i) {
    operands[i].add(o.operands[i]);
    err2[i] += o.err2[i], ref2[i] += o.ref2[i], checked[i] += o.checked[i];
  }
}

double SiteStats::rel_err(Pass pass) const {
  const int i = static_cast<int>(pass);
  if (checked[i] == 0) return std::numeric_limits<double>::quiet_NaN();
  return ref2[i] > 0 ? std::sqrt(err2[i] / ref2[i]) : std::sqrt(err2[i]);
}

QuantLinear::QuantLinear(std::string name, Recipe recipe, const PrecisionConfig& config)
    : name_(std::move(name)), recipe_(recipe), config_(config) {
  signs_ = static_cast<uint16_t>(splitmix64(config.seed ^ 0x52485431) & 0xFFFFu);
  stream_ = splitmix64(config.seed ^ std::hash<std::string>{}(name_));  // each site its own rounding stream
  if (operand_format(recipe_, Role::Input, Pass::Fprop).scaling == Scaling::TensorDelayed)
    AmaxHistory probe(config.amax_history);  // a bad length fails here, naming the axis
}

Operand QuantLinear::prepare(Pass pass, Role role, int64_t instance, const Operand& src, std::vector<float>& buf) {
  const OperandFormat f = operand_format(recipe_, role, pass);
  buf.resize(static_cast<size_t>(src.rows * src.cols));
  Operand in = src;
  if (f.hadamard) {  // transform a packed copy, then quantise it in place
    for (int64_t r = 0; r < src.rows; ++r)
      std::copy(src.data + r * src.ld, src.data + r * src.ld + src.cols, buf.begin() + r * src.cols);
    hadamard16(buf.data(), src.rows, src.cols, src.k_rows, signs_);
    in = {buf.data(), src.rows, src.cols, src.cols, src.k_rows};
  }
  AmaxHistory* history = nullptr;
  if (f.scaling == Scaling::TensorDelayed) {
    const size_t at = static_cast<size_t>(instance * 3 + static_cast<int>(role));
    while (histories_.size() <= at) histories_.emplace_back(config_.amax_history);
    history = &histories_[at];
  }
  const uint64_t seed = splitmix64(stream_ + 0x9E3779B97F4A7C15ull * ++calls_);
  QuantCounts counts = quantize(f, in, history ? history->scale() : 1.0f, seed, buf.data());
  if (history) history->record(counts.amax);  // this step's amax, for the scales of the steps after it
  // A weight whose quantisation does not depend on orientation (one tensor scale, square blocks) is one stored
  // copy for fprop and dgrad: its bytes count once.
  const bool one_copy = f.square || f.scaling == Scaling::TensorDelayed || f.scaling == Scaling::TensorCurrent ||
                        f.scaling == Scaling::Bf16 || f.scaling == Scaling::None;
  if (role == Role::Weight && pass == Pass::Dgrad && one_copy) counts.bytes = 0;
  stats_.operands[static_cast<int>(role)].add(counts);
  return {buf.data(), src.rows, src.cols, src.cols, src.k_rows};
}

void QuantLinear::gemm(Pass pass, int64_t instance, bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float* a,
                       int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  const int p = static_cast<int>(pass);
  // A is stored [m, k] (K along its columns) or, transposed, [k, m]; B [k, n] or [n, k].
  const Operand qa = prepare(pass, kRoleA[p], instance, {a, ta ? k : m, ta ? m : k, lda, ta}, qa_);
  const Operand qb = prepare(pass, kRoleB[p], instance, {b, tb ? n : k, tb ? k : n, ldb, !tb}, qb_);
  const Accumulate acc = narrow(recipe_) ? config_.accumulate : Accumulate::Fp32;
  auto multiply = [&](float into_beta, float* into, int64_t ld) {
    if (acc == Accumulate::Fp32) {
      cpu::gemm<float>(ta, tb, m, n, k, 1.0f, qa.data, qa.cols, qb.data, qb.cols, into_beta, into, ld);
    } else {
      const float* ca = canonical(qa.data, qa.rows, qa.cols, ta, ta_);
      const float* cb = canonical(qb.data, qb.rows, qb.cols, tb, tb_);
      gemm_accumulate(acc, ca, cb, m, n, k, into_beta, into, ld);
    }
  };
  if (!checking_) {
    multiply(beta, c, ldc);
    return;
  }
  out_.resize(static_cast<size_t>(m * n));
  multiply(0.0f, out_.data(), n);
  const auto t0 = Clock::now();  // the check: the fp32 GEMM, the errors, and the detour through out_
  ref_.resize(out_.size());
  cpu::gemm<float>(ta, tb, m, n, k, 1.0f, a, lda, b, ldb, 0.0f, ref_.data(), n);
  double e2 = 0, r2 = 0;
  for (size_t i = 0; i < out_.size(); ++i) {
    const double d = static_cast<double>(out_[i]) - ref_[i];
    e2 += d * d, r2 += static_cast<double>(ref_[i]) * ref_[i];
  }
  stats_.err2[p] += e2, stats_.ref2[p] += r2, ++stats_.checked[p];
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float& ci = c[i * ldc + j];
      ci = beta == 0 ? out_[i * n + j] : out_[i * n + j] + beta * ci;
    }
  check_s_ += seconds_since(t0);
}

void QuantLinear::end_step() {
  for (size_t i = 0; i < histories_.size(); ++i) {
    const Role role = static_cast<Role>(i % 3);
    histories_[i].roll(formats::element_spec(operand_format(recipe_, role, Pass::Fprop).element).max);
  }
}

}  // namespace mlsb::moe_train::precision
