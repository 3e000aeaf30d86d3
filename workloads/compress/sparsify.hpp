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
class ErrorFeedback {
 public:
  /// Adds the residual to x in place (sizes the residual to x on first use; zero then).
  void apply(std::span<float> x);
  /// residual = corrected - reconstructed (both x.size()).
  void update(std::span<const float> corrected, std::span<const float> reconstructed);
  void reset() { residual_.clear(); }
  std::span<const float> residual() const { return residual_; }

 private:
  std::vector<float> residual_;
};

/// Codecs (stream: 16-byte header u32 magic "MSP1", u8 kind 1 topk / 2 randomk, u8 dtype, u16 0,
/// u64 count; then u64 k; topk: k u32-or-u64 indices (u64) then k fp32 values; randomk: u64 step,
/// then k fp32 values — the indices are recomputed from (seed, step)). With error feedback the codec
/// keeps the residual between compress calls; decompress writes zeros outside the kept indices.
std::unique_ptr<Codec> make_topk_codec(double density, bool error_feedback);
std::unique_ptr<Codec> make_randomk_codec(double density, uint64_t seed, bool error_feedback);

}  // namespace mlsb::compress
