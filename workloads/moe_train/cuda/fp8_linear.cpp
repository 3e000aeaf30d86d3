// A linear layer's GEMMs in FP8 on the device (fp8_linear.hpp); compiled only with CUDA.
#ifdef MLSB_HAVE_CUDA
#include "workloads/moe_train/cuda/fp8_linear.hpp"

#include <stdexcept>
#include <string>

#include "backends/cuda/copy.hpp"
#include "backends/formats/small_floats.hpp"
#include "workloads/moe_train/cuda/check.hpp"

namespace mlsb::moe_train::gpu {
namespace {

constexpr int64_t kPad = 16;  // cuBLASLt's FP8 reduction dimension: a multiple of 16
int64_t padded(int64_t m) { return (m + kPad - 1) / kPad * kPad; }

}  // namespace

Fp8Linear::Fp8Linear(int64_t instances, int64_t in, int64_t out, const Fp8Recipe& recipe, Fp8Gemm& gemm,
                     cudaStream_t stream)
    : n_(instances),
      in_(in),
      out_(out),
      recipe_(recipe),
      gemm_(gemm),
      stream_(stream),
      up_(instances * 3),
      down_(instances * 3) {
  if (in % kPad || out % kPad)
    throw std::invalid_argument("fp8 linear: " + std::to_string(in) + " x " + std::to_string(out) +
                                " weights; FP8 GEMMs need multiples of 16");
  for (int r = 0; r < 3; ++r) {
    const precision::OperandFormat f =
        precision::operand_format(recipe.recipe, static_cast<precision::Role>(r), precision::Pass::Fprop);
    if (f.scaling != precision::Scaling::TensorCurrent && f.scaling != precision::Scaling::TensorDelayed)
      throw std::invalid_argument("fp8 linear: precision " + std::string(precision::name_of(recipe.recipe)) +
                                  " does not scale per tensor");
    delayed_ = f.scaling == precision::Scaling::TensorDelayed, element_[r] = f.element;
  }
  // The quantised weights start 256-byte aligned, as cuBLASLt's fastest kernels like them.
  const int64_t scale_bytes = (n_ * 3 * static_cast<int64_t>(sizeof(Fp8Scale)) + 255) / 256 * 256;
  auto* base = mem_.ensure<uint8_t>(scale_bytes + 2 * n_ * in_ * out_);
  scales_ = reinterpret_cast<Fp8Scale*>(base);
  wt_ = base + scale_bytes, w_ = wt_ + n_ * in_ * out_;
  for (int64_t s = 0; s < n_ * 3; ++s) up_[s] = Fp8Scale{};
  if (delayed_) histories_.assign(static_cast<size_t>(n_ * 3), precision::AmaxHistory(recipe_.amax_history));
  ran_.assign(static_cast<size_t>(n_), false);
}

void Fp8Linear::reserve(int64_t rows) {
  const int64_t k = rows + kPad;  // one instance's rows padded (its scratch is the only one live)
  qa_.ensure<uint8_t>(std::max(rows * in_, in_ * k));
  qb_.ensure<uint8_t>(std::max(rows * out_, out_ * k));
}

void Fp8Linear::cast(const bf16* x, int64_t rows, int64_t cols, int64_t i, Role r, bool transposed, int64_t out_ld,
                     uint8_t* out) {
  fp8_cast(x, rows, cols, slot(i, r), !delayed_, e5m2(r), transposed, out_ld, out, stream_);
}

void Fp8Linear::begin(const bf16* w) {
  ran_.assign(ran_.size(), false);
  check_cuda(cuda::copy_on(stream_, scales_, up_.data(), sizeof(Fp8Scale) * static_cast<size_t>(n_ * 3),
                           cuda::Landed::Later, "fp8 scales"),
             "fp8 scales");
  for (int64_t i = 0; i < n_; ++i) {
    const bf16* wi = w + i * in_ * out_;
    fp8_amax(wi, in_ * out_, slot(i, kWeight), stream_);
    cast(wi, in_, out_, i, kWeight, true, in_, wt_ + i * in_ * out_);  // [out, in]: fprop's K-major weight
    cast(wi, in_, out_, i, kWeight, false, 0, w_ + i * in_ * out_);    // [in, out]: dgrad's
  }
  check_launch("fp8 weights");
}

void Fp8Linear::fprop(int64_t i, const bf16* x, int64_t m, bf16* y) {
  if (m == 0) return;
  ran_[static_cast<size_t>(i)] = true;
  uint8_t* qx = qa_.ensure<uint8_t>(m * in_);
  fp8_amax(x, m * in_, slot(i, kInput), stream_);
  cast(x, m, in_, i, kInput, false, 0, qx);
  gemm_.run(m, out_, in_, {qx, in_, e5m2(kInput), &slot(i, kInput)->descale},
            {wt_ + i * in_ * out_, in_, e5m2(kWeight), &slot(i, kWeight)->descale}, y, out_, false, recipe_.fast_accum);
}

void Fp8Linear::wgrad(int64_t i, const bf16* x, const bf16* dy, int64_t m, float* dw) {
  if (m == 0) return;
  const int64_t k = padded(m);
  uint8_t* xt = qa_.ensure<uint8_t>(in_ * k);
  uint8_t* dyt = qb_.ensure<uint8_t>(out_ * k);
  fp8_amax(dy, m * out_, slot(i, kGrad), stream_);
  cast(x, m, in_, i, kInput, true, k, xt);    // x^T [in, k]; fprop recorded x's amax
  cast(dy, m, out_, i, kGrad, true, k, dyt);  // dy^T [out, k]
  gemm_.run(in_, out_, k, {xt, k, e5m2(kInput), &slot(i, kInput)->descale},
            {dyt, k, e5m2(kGrad), &slot(i, kGrad)->descale}, dw, out_, true, recipe_.fast_accum);
}

void Fp8Linear::dgrad(int64_t i, const bf16* dy, int64_t m, void* dx, bool dx_fp32) {
  if (m == 0) return;
  uint8_t* qdy = qb_.ensure<uint8_t>(m * out_);
  cast(dy, m, out_, i, kGrad, false, 0, qdy);
  gemm_.run(m, in_, out_, {qdy, out_, e5m2(kGrad), &slot(i, kGrad)->descale},
            {w_ + i * in_ * out_, out_, e5m2(kWeight), &slot(i, kWeight)->descale}, dx, in_, dx_fp32,
            recipe_.fast_accum);
}

void Fp8Linear::end_step() {
  if (!delayed_) return;
  check_cuda(cuda::copy_on(stream_, down_.data(), scales_, sizeof(Fp8Scale) * static_cast<size_t>(n_ * 3),
                           cuda::Landed::Later, "fp8 amaxes"),
             "fp8 amaxes");
}

void Fp8Linear::roll() {
  if (!delayed_) return;
  for (int64_t s = 0; s < n_ * 3; ++s) {
    precision::AmaxHistory& h = histories_[static_cast<size_t>(s)];
    // An instance without rows this step quantised nothing the step used (its weight was cast regardless): as on
    // the CPU, which skips such an expert's GEMMs, nothing is recorded.
    if (ran_[static_cast<size_t>(s / 3)]) h.record(down_[s].amax);
    h.roll(formats::element_spec(element_[s % 3]).max);
    up_[s] = Fp8Scale{};
    up_[s].scale = h.scale();
  }
}

double Fp8Linear::bytes() const { return static_cast<double>(mem_.size() + qa_.size() + qb_.size()); }

}  // namespace mlsb::moe_train::gpu
#endif
