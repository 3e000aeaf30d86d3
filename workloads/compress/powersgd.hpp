#pragma once
// PowerSGD (Vogels, Karimireddy & Jaggi, NeurIPS 2019, Algorithm 1): one power-iteration step
// approximates a gradient matrix M (rows x cols) by P Q^T with P rows x r and Q cols x r, Q warm-started
// from the previous step. Linear in M for a fixed Q, so P and Q can be summed by allreduce.
#include <cstdint>
#include <vector>

#include "workloads/compress/codec.hpp"

namespace mlsb::compress {

/// The matrix a tensor is viewed as: 2-D shapes as they are, N-D as shape[0] x (product of the rest),
/// 1-D (or no shape) as a near-square rows x cols >= count, zero-padded.
struct MatrixShape {
  int64_t rows = 0, cols = 0;
};
MatrixShape powersgd_matrix_shape(int64_t count, const std::vector<int64_t>& shape);

class PowerSgd {
 public:
  /// Q starts as a Gaussian matrix from `seed` (the same on every rank). Throws std::invalid_argument
  /// when rank < 1 or rank > min(rows, cols).
  PowerSgd(MatrixShape shape, int rank, uint64_t seed);
  MatrixShape shape() const { return shape_; }
  int rank() const { return rank_; }

  /// P = M Q; m is rows x cols row-major fp32, p is rows x rank (OpenBLAS sgemm).
  void compute_p(const float* m, float* p) const;
  /// Orthonormalises the columns of p (rows x rank) in place (modified Gram-Schmidt; a zero column
  /// stays zero).
  static void orthonormalize(float* p, int64_t rows, int rank);
  /// Q = M^T P (P orthonormal), kept as the next step's warm start; returns it (cols x rank).
  float* compute_q(const float* m, const float* p);
  /// out = P Q^T (rows x cols).
  void reconstruct(const float* p, float* out) const;

  float* q() { return q_.data(); }
  void reset(uint64_t seed);

 private:
  MatrixShape shape_;
  int rank_;
  std::vector<float> q_;
};

/// The PowerSGD codec (stream: 16-byte header u32 magic "MPS1", u8 dtype, u8 0, u16 0, u64 count;
/// then u64 rows, u64 cols, u32 rank, u32 0; then P (rows x rank fp32) and Q (cols x rank fp32)).
/// Keeps Q (warm start) and, with error feedback, the residual between compress calls. The configured
/// rank is capped at min(rows, cols) (the stream holds the rank used; an empty tensor has rows = cols =
/// rank = 0). Non-finite input elements are treated as 0; magnitudes near FLT_MAX overflow the fp32
/// products, making that step's P/Q non-finite, after which Q restarts from the seed.
std::unique_ptr<Codec> make_powersgd_codec(int rank, uint64_t seed, bool error_feedback);

}  // namespace mlsb::compress
