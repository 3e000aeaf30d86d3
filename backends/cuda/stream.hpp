#pragma once
// Owning wrappers of a CUDA stream and a CUDA event, and a timer of event windows (include only where
// MLSB_HAVE_CUDA is defined).
// Construction throws std::runtime_error("cuda: ...") naming the failed call.
#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "backends/cuda/check.hpp"

namespace mlsb::cuda {

/// A non-blocking stream (no implicit synchronisation with the legacy default stream).
class Stream {
 public:
  Stream() { check_cuda(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking), "cudaStreamCreate"); }
  ~Stream() { cudaStreamDestroy(s_); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return s_; }

 private:
  cudaStream_t s_ = nullptr;
};

/// An event; `timing` false creates it with cudaEventDisableTiming (cheaper, for ordering only).
class Event {
 public:
  explicit Event(bool timing = true) {
    check_cuda(cudaEventCreateWithFlags(&e_, timing ? cudaEventDefault : cudaEventDisableTiming), "cudaEventCreate");
  }
  ~Event() {
    if (e_) cudaEventDestroy(e_);
  }
  Event(Event&& o) noexcept : e_(o.e_) { o.e_ = nullptr; }  ///< so events can live in a std::vector
  Event& operator=(Event&&) = delete;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const { return e_; }

 private:
  cudaEvent_t e_ = nullptr;
};

/// Milliseconds between two recorded, completed timing events (cudaEventElapsedTime: about 0.5 us
/// resolution). Throws std::runtime_error("CONTEXT: cudaEventElapsedTime: ...") otherwise.
inline float elapsed_ms(const Event& start, const Event& end, const char* context = "cuda") {
  float ms = 0;
  check_cuda(cudaEventElapsedTime(&ms, start.get(), end.get()), "cudaEventElapsedTime", context);
  return ms;
}

/// Device time of chosen windows of work on one stream, taken by CUDA events alone: begin() and end() record
/// a timing event pair around kernels, and total_ms() (once the stream is synchronised) sums the windows.
/// Nothing but events enters it, so host work between windows (an allocation, a synchronisation, a table
/// built on the host) is never counted. Throws std::logic_error for an end() without a begin() (or the
/// reverse) and std::runtime_error for a failed CUDA call.
class EventTimer {
 public:
  EventTimer(cudaStream_t stream, const char* context) : stream_(stream), context_(context) {}
  void begin() {
    if (events_.size() % 2) throw std::logic_error(std::string(context_) + ": a timing window is already open");
    record();
  }
  void end() {
    if (events_.size() % 2 == 0) throw std::logic_error(std::string(context_) + ": no timing window is open");
    record();
  }
  /// The windows' total, ms; 0 without any.
  double total_ms() const {
    if (events_.size() % 2) throw std::logic_error(std::string(context_) + ": a timing window is still open");
    double ms = 0;
    for (size_t i = 0; i < events_.size(); i += 2) ms += elapsed_ms(events_[i], events_[i + 1], context_);
    return ms;
  }

 private:
  void record() {
    events_.emplace_back();
    check_cuda(cudaEventRecord(events_.back().get(), stream_), "cudaEventRecord", context_);
  }
  cudaStream_t stream_;
  const char* context_;
  std::vector<Event> events_;
};

}  // namespace mlsb::cuda
