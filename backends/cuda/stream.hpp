#pragma once
// Owning wrappers of a CUDA stream and a CUDA event (include only where MLSB_HAVE_CUDA is defined).
// Construction throws std::runtime_error("cuda: ...") naming the failed call.
#include <cuda_runtime_api.h>

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

}  // namespace mlsb::cuda
