// PowerSGD (Vogels, Karimireddy & Jaggi, NeurIPS 2019, Algorithm 1) with OpenBLAS; the stream format
// is documented in powersgd.hpp.
#include "workloads/compress/powersgd.hpp"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "workloads/compress/lossy_stream.hpp"
#include "workloads/compress/sparsify.hpp"
#include "workloads/compress/split_rng.hpp"

namespace mlsb::compress {

MatrixShape powersgd_matrix_shape(int64_t count, const std::vector<int64_t>& shape) {
  if (count <= 0) return {0, 0};
  if (shape.size() >= 2) {
    int64_t rest = 1;
    bool ok = shape[0] > 0;
    for (size_t i = 1; i < shape.size() && ok; ++i) ok = shape[i] > 0 && !__builtin_mul_overflow(rest, shape[i], &rest);
    int64_t product = 0;
    if (ok && !__builtin_mul_overflow(shape[0], rest, &product) && product == count) return {shape[0], rest};
  }
  // 1-D (or a shape that does not describe `count`): the near-square cols = ceil(sqrt(count)).
  int64_t cols = static_cast<int64_t>(std::sqrt(static_cast<double>(count)));
  while (cols * cols < count) ++cols;
  while (cols > 1 && (cols - 1) * (cols - 1) >= count) --cols;
  return {(count + cols - 1) / cols, cols};
}

namespace {

void check_blas_dims(MatrixShape s, int rank) {
  constexpr int64_t kMax = std::numeric_limits<int>::max();
  if (s.rows > kMax || s.cols > kMax || rank > kMax)
    throw std::invalid_argument("powersgd: matrix " + std::to_string(s.rows) + " x " + std::to_string(s.cols) +
                                " exceeds the BLAS index range");
}

/// out (row_count x cols) = P[rows row_begin..] Q^T.
void reconstruct_rows(const float* p, const float* q, int64_t row_begin, int64_t row_count, int64_t cols, int rank,
                      float* out) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(row_count), static_cast<int>(cols), rank,
              1.0f, p + row_begin * rank, rank, q, rank, 0.0f, out, static_cast<int>(cols));
}

}  // namespace

PowerSgd::PowerSgd(MatrixShape shape, int rank, uint64_t seed) : shape_(shape), rank_(rank) {
  if (rank < 1 || rank > std::min(shape.rows, shape.cols))
    throw std::invalid_argument("rank: must be in [1, min(rows, cols)] = [1, " +
                                std::to_string(std::min(shape.rows, shape.cols)) + "] (got " + std::to_string(rank) +
                                ")");
  check_blas_dims(shape, rank);
  reset(seed);
}

void PowerSgd::reset(uint64_t seed) {
  q_.resize(static_cast<size_t>(shape_.cols * rank_));
  detail::SplitRng rng(splitmix64(seed ^ 0x6a09e667f3bcc908ULL));
  for (float& v : q_) v = static_cast<float>(rng.normal());
}

void PowerSgd::compute_p(const float* m, float* p) const {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(shape_.rows), rank_,
              static_cast<int>(shape_.cols), 1.0f, m, static_cast<int>(shape_.cols), q_.data(), rank_, 0.0f, p, rank_);
}

void PowerSgd::orthonormalize(float* p, int64_t rows, int rank) {
  for (int j = 0; j < rank; ++j) {
    for (int i = 0; i < j; ++i) {
      double dot = 0;
      for (int64_t r = 0; r < rows; ++r) dot += static_cast<double>(p[r * rank + i]) * p[r * rank + j];
      for (int64_t r = 0; r < rows; ++r) p[r * rank + j] -= static_cast<float>(dot) * p[r * rank + i];
    }
    double norm = 0;
    for (int64_t r = 0; r < rows; ++r) norm += static_cast<double>(p[r * rank + j]) * p[r * rank + j];
    norm = std::sqrt(norm);
    const float inv = norm > 0 && std::isfinite(norm) ? static_cast<float>(1 / norm) : 0.0f;
    for (int64_t r = 0; r < rows; ++r) p[r * rank + j] *= inv;
  }
}

float* PowerSgd::compute_q(const float* m, const float* p) {
  cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, static_cast<int>(shape_.cols), rank_,
              static_cast<int>(shape_.rows), 1.0f, m, static_cast<int>(shape_.cols), p, rank_, 0.0f, q_.data(), rank_);
  return q_.data();
}

void PowerSgd::reconstruct(const float* p, float* out) const {
  reconstruct_rows(p, q_.data(), 0, shape_.rows, shape_.cols, rank_, out);
}

namespace {

constexpr uint32_t kPowerMagic = 0x3153504D;  // "MPS1"
constexpr size_t kPowerHeaderBytes = 40;       // 16-byte common header + rows, cols, rank, reserved
constexpr int64_t kRowChunk = 256;             // rows reconstructed at a time (bounds the scratch memory)

class PowerSgdCodec final : public Codec {
 public:
  PowerSgdCodec(int rank, uint64_t seed, bool error_feedback) : rank_(rank), seed_(seed), error_feedback_(error_feedback) {
    if (rank < 1) throw std::invalid_argument("rank: must be at least 1 (got " + std::to_string(rank) + ")");
  }
  std::string name() const override { return "powersgd"; }
  bool lossless() const override { return false; }

  size_t max_compressed_bytes(TensorView in) const override {
    const MatrixShape s = shape_of(in);
    return kPowerHeaderBytes + 4 * static_cast<size_t>(effective_rank(s)) * static_cast<size_t>(s.rows + s.cols);
  }

  size_t compress(TensorView in, std::span<uint8_t> out) override {
    if (out.size() < max_compressed_bytes(in))
      throw CodecError(name() + ": output buffer of " + std::to_string(out.size()) + " bytes, need " +
                       std::to_string(max_compressed_bytes(in)));
    const MatrixShape s = shape_of(in);
    const int r = effective_rank(s);
    detail::StreamWriter w(out, name());
    w.put(kPowerMagic);
    w.put(static_cast<uint8_t>(in.dtype));
    w.put(uint8_t{0});
    w.put(uint16_t{0});
    w.put(static_cast<uint64_t>(in.count));
    w.put(static_cast<uint64_t>(s.rows));
    w.put(static_cast<uint64_t>(s.cols));
    w.put(static_cast<uint32_t>(r));
    w.put(uint32_t{0});
    if (r == 0) return w.size();
    if (!state_ || state_->shape().rows != s.rows || state_->shape().cols != s.cols || state_->rank() != r) {
      try {
        state_.emplace(s, r, seed_);
      } catch (const std::invalid_argument& e) {
        throw CodecError(std::string(e.what()));
      }
      feedback_.reset();
    }
    // M: the input (non-finite elements as 0), plus the residual, zero-padded to rows x cols.
    std::vector<float> m(static_cast<size_t>(s.rows * s.cols), 0.0f);
    std::span<float> real(m.data(), static_cast<size_t>(in.count));
    to_float(in, real);
    for (float& v : real)
      if (!std::isfinite(v)) v = 0.0f;
    if (error_feedback_) feedback_.apply(real);
    uint8_t* p = w.reserve(4 * static_cast<size_t>(s.rows) * r);
    uint8_t* q = w.reserve(4 * static_cast<size_t>(s.cols) * r);
    std::vector<float> pa(static_cast<size_t>(s.rows) * r);  // aligned scratch: the stream may be unaligned
    state_->compute_p(m.data(), pa.data());
    PowerSgd::orthonormalize(pa.data(), s.rows, r);
    const float* qa = state_->compute_q(m.data(), pa.data());
    std::memcpy(p, pa.data(), 4 * pa.size());
    std::memcpy(q, qa, 4 * static_cast<size_t>(s.cols) * r);
    if (error_feedback_) {
      // residual = M - P Q^T over the real elements, a chunk of rows at a time.
      std::vector<float> recon(static_cast<size_t>(s.rows * s.cols));
      for (int64_t row = 0; row < s.rows; row += kRowChunk)
        reconstruct_rows(pa.data(), qa, row, std::min(kRowChunk, s.rows - row), s.cols, r,
                         recon.data() + row * s.cols);
      recon.resize(static_cast<size_t>(in.count));
      feedback_.update(real, recon);
    }
    // An overflow (huge inputs) leaves Q non-finite: restart the warm start rather than carry NaN forever.
    if (!std::all_of(qa, qa + static_cast<size_t>(s.cols) * r, [](float v) { return std::isfinite(v); }))
      state_->reset(seed_);
    return w.size();
  }

  void decompress(std::span<const uint8_t> in, MutableTensorView out) override {
    detail::StreamReader rd(in, name());
    if (rd.get<uint32_t>("magic") != kPowerMagic) rd.fail("not a PowerSGD stream (bad magic)");
    const uint8_t dtype = rd.get<uint8_t>("dtype");
    if (rd.get<uint8_t>("reserved") != 0 || rd.get<uint16_t>("reserved") != 0) rd.fail("reserved header field is not 0");
    const uint64_t count = rd.get<uint64_t>("count");
    detail::check_target(rd, dtype, count, out);
    const uint64_t rows = rd.get<uint64_t>("rows"), cols = rd.get<uint64_t>("cols");
    const uint32_t r = rd.get<uint32_t>("rank");
    if (rd.get<uint32_t>("reserved") != 0) rd.fail("reserved field after rank is not 0");
    if (count == 0) {
      if (rows != 0 || cols != 0 || r != 0) rd.fail("an empty tensor must have rows = cols = rank = 0");
      rd.expect_end();
      return;
    }
    // The matrix must cover the tensor with less than one row of padding, so its size is bounded by the
    // output's; the factors' sizes then bound rank.
    unsigned __int128 cells = static_cast<unsigned __int128>(rows) * cols;
    if (rows == 0 || cols == 0 || cells < count || cells - count >= cols || rows > std::numeric_limits<int>::max() ||
        cols > std::numeric_limits<int>::max())
      rd.fail("matrix " + std::to_string(rows) + " x " + std::to_string(cols) + " does not fit " +
              std::to_string(count) + " elements");
    if (r < 1 || r > std::min(rows, cols)) rd.fail("rank " + std::to_string(r) + " is outside [1, min(rows, cols)]");
    const uint64_t factor_bytes = 4ull * r * (rows + cols);
    if (rd.remaining() != factor_bytes)
      rd.fail("stream has " + std::to_string(rd.remaining()) + " bytes of factors, rank " + std::to_string(r) +
              " needs " + std::to_string(factor_bytes));
    std::vector<float> p(rows * r), q(cols * r);
    std::memcpy(p.data(), rd.take(4 * p.size(), "P"), 4 * p.size());
    std::memcpy(q.data(), rd.take(4 * q.size(), "Q"), 4 * q.size());
    const int64_t nrows = static_cast<int64_t>(rows), ncols = static_cast<int64_t>(cols);
    const int64_t chunk = std::min<int64_t>(nrows, kRowChunk);
    std::vector<float> buf(static_cast<size_t>(chunk * ncols));
    for (int64_t row = 0; row < nrows; row += chunk) {
      const int64_t n = std::min(chunk, nrows - row);
      reconstruct_rows(p.data(), q.data(), row, n, ncols, static_cast<int>(r), buf.data());
      const int64_t first = row * ncols, last = std::min<int64_t>(out.count, first + n * ncols);
      for (int64_t i = first; i < last; ++i) store_float(out.data, out.dtype, i, buf[i - first]);
    }
  }

  void reset() override {
    state_.reset();
    feedback_.reset();
  }

 private:
  static MatrixShape shape_of(TensorView in) {
    return powersgd_matrix_shape(in.count, std::vector<int64_t>(in.shape.begin(), in.shape.end()));
  }
  /// The configured rank, capped at min(rows, cols) for small tensors (0 for an empty one).
  int effective_rank(MatrixShape s) const {
    return static_cast<int>(std::min<int64_t>(rank_, std::min(s.rows, s.cols)));
  }

  int rank_;
  uint64_t seed_;
  bool error_feedback_;
  std::optional<PowerSgd> state_;
  ErrorFeedback feedback_;
};

}  // namespace

std::unique_ptr<Codec> make_powersgd_codec(int rank, uint64_t seed, bool error_feedback) {
  return std::make_unique<PowerSgdCodec>(rank, seed, error_feedback);
}

}  // namespace mlsb::compress
