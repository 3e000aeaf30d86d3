#pragma once
// Sparsifiers: top-k (largest magnitudes) and random-k (indices from a seed shared by all ranks, so the
// selected values of different ranks can be summed by allreduce). Stich, Cordonnier & Jaggi,
// "Sparsified SGD with memory", NeurIPS 2018 (error feedback); Lin et al., "Deep Gradient
// Compression", ICLR 2018.
#include <cstdint>
#include <span>
#include <vector>

#include "workloads/compress/codec.hpp"

namespace mlsb::compress {

/// k = max(1, round(density * n)) for n > 0, 0 for n == 0.
int64_t sparse_k(int64_t n, double density);

/// The k indices (ascending) of the largest |x_i|; NaN counts as largest; ties by lower index.
std::vector<int64_t> topk_indices(std::span<const float> x, int64_t k);

/// k distinct indices in [0, n), ascending, a pure function of (n, k, seed, step): every rank
/// computes the same set for the same step.
std::vector<int64_t> randomk_indices(int64_t n, int64_t k, uint64_t seed, uint64_t step);

/// Error feedback (memory): before compressing, x += residual; after, residual = x - decompressed.
/// A residual element that is not finite (the input held NaN/Inf) is stored as 0, so one bad step does
/// not poison every later one.
class ErrorFeedback {
 public:
  /// Adds the residual to x in place (sizes the residual to x on first use, or when x's size changes;
  /// zero then).
  void apply(std::span<float> x);
  /// residual = corrected - reconstructed (both x.size(); std::invalid_argument otherwise).
  void update(std::span<const float> corrected, std::span<const float> reconstructed);
  /// The same for a sparse reconstruction that kept corrected[i] exactly at the ascending indices
  /// `sent` and 0 elsewhere: residual = corrected with those elements zeroed.
  void update_sparse(std::span<const float> corrected, std::span<const int64_t> sent);
  void reset() { residual_.clear(); }
  std::span<const float> residual() const { return residual_; }

 private:
  std::vector<float> residual_;
};

/// Codecs (stream: 16-byte header u32 magic "MSP1", u8 kind 1 topk / 2 randomk, u8 dtype, u16 0,
/// u64 count; then u64 k; topk: k u64 indices (strictly ascending, < count) then k fp32 values;
/// randomk: u64 step, then k fp32 values — the indices are randomk_indices(count, k, seed, step)). k is
/// sparse_k(count, density); values are the (error-corrected) elements, unscaled. step counts compress()
/// calls since construction or reset(), so codecs that compress in lockstep use the same indices. With
/// error feedback the codec keeps the residual between compress calls; decompress writes zeros outside
/// the kept indices. Decoding checks sizes, k <= count and the indices, so any stream is safe.
std::unique_ptr<Codec> make_topk_codec(double density, bool error_feedback);
std::unique_ptr<Codec> make_randomk_codec(double density, uint64_t seed, bool error_feedback);

}  // namespace mlsb::compress
