#pragma once
// Timing of one stream's work from CUDA events (include only where MLSB_HAVE_CUDA is defined).
// Marks recorded on the stream cut its timeline into consecutive intervals; each interval carries a
// label (what the stream did in it) and, optionally, the batch it is charged to. Sums per label and
// per batch come from cudaEventElapsedTime of consecutive marks, so they add up to the whole span.
// A ring of events bounds memory: a mark recorded while the ring is full first waits for the oldest
// pending interval to end, so the host runs at most `ring` marks ahead of the device. Resolution is
// cudaEventElapsedTime's (about 0.5 us) per interval.
#include <cuda_runtime_api.h>

#include <array>
#include <cstdint>
#include <vector>

#include "backends/cuda/stream.hpp"

namespace mlsb::moe_offload::gpu {

class Timeline {
 public:
  static constexpr int kLabels = 4;

  /// `ring` >= 2 timing events, created now. Throws std::runtime_error when CUDA fails.
  explicit Timeline(int64_t ring = 4096);

  /// Starts over on `stream` with `batches` per-batch sums (all zero) and records the first mark.
  void start(cudaStream_t stream, int64_t batches);
  /// Records a mark; the interval since the previous one gets `label` (0 .. kLabels-1) and is charged
  /// to `batch` (0 .. batches-1, or -1 for none).
  void mark(int label, int64_t batch = -1);
  /// Waits until the stream has passed the last mark and accounts every interval.
  void finish();

  double total() const { return total_; }                       ///< seconds, first mark to last
  double sum(int label) const { return sums_[label]; }           ///< seconds labelled `label`
  const std::vector<double>& batch_sums() const { return batch_; }  ///< seconds per batch

 private:
  void retire_oldest();

  cudaStream_t stream_ = nullptr;
  std::vector<cuda::Event> events_;
  std::vector<int> label_;
  std::vector<int64_t> charge_;
  int64_t head_ = 0, next_ = 0;  ///< marks [head_, next_) are in the ring; head_ starts the oldest pending interval
  std::array<double, kLabels> sums_{};
  double total_ = 0;
  std::vector<double> batch_;
};

}  // namespace mlsb::moe_offload::gpu
