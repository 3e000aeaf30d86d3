// Event-ring timing of a stream (timeline.hpp); compiled only with CUDA.
#ifdef MLSB_HAVE_CUDA
#include "workloads/moe_offload/cuda/timeline.hpp"

#include <stdexcept>

#include "backends/cuda/check.hpp"

namespace mlsb::moe_offload::gpu {
namespace {

constexpr const char* kContext = "moe_offload gpu";

}  // namespace

Timeline::Timeline(int64_t ring) {
  if (ring < 2) throw std::invalid_argument("timeline: ring must hold at least 2 events");
  events_.reserve(static_cast<size_t>(ring));
  for (int64_t i = 0; i < ring; ++i) events_.emplace_back(true);
  label_.assign(static_cast<size_t>(ring), 0);
  charge_.assign(static_cast<size_t>(ring), -1);
}

void Timeline::start(cudaStream_t stream, int64_t batches) {
  stream_ = stream;
  head_ = next_ = 0;
  sums_.fill(0.0);
  total_ = 0;
  batch_.assign(static_cast<size_t>(batches), 0.0);
  cuda::check_cuda(cudaEventRecord(events_[0].get(), stream_), "cudaEventRecord (timeline)", kContext);
  next_ = 1;
}

void Timeline::mark(int label, int64_t batch) {
  const int64_t ring = static_cast<int64_t>(events_.size());
  if (next_ - head_ == ring) retire_oldest();
  const size_t slot = static_cast<size_t>(next_ % ring);
  cuda::check_cuda(cudaEventRecord(events_[slot].get(), stream_), "cudaEventRecord (timeline)", kContext);
  label_[slot] = label;
  charge_[slot] = batch;
  ++next_;
}

void Timeline::finish() {
  while (next_ - head_ > 1) retire_oldest();
}

void Timeline::retire_oldest() {
  const int64_t ring = static_cast<int64_t>(events_.size());
  const size_t a = static_cast<size_t>(head_ % ring), b = static_cast<size_t>((head_ + 1) % ring);
  cuda::check_cuda(cudaEventSynchronize(events_[b].get()), "cudaEventSynchronize (timeline)", kContext);
  const double s = static_cast<double>(cuda::elapsed_ms(events_[a], events_[b], kContext)) * 1e-3;
  sums_[static_cast<size_t>(label_[b])] += s;
  total_ += s;
  if (charge_[b] >= 0) batch_[static_cast<size_t>(charge_[b])] += s;
  ++head_;
}

}  // namespace mlsb::moe_offload::gpu
#endif
