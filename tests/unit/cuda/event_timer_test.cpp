// cuda::EventTimer takes nothing but event windows, so a codec's timed kernels can hold no host work; its
// misuse is refused before any CUDA call (this machine has no GPU to record events on).
#include <gtest/gtest.h>

#ifdef MLSB_HAVE_CUDA
#include <stdexcept>

#include "backends/cuda/stream.hpp"

namespace mlsb::cuda {
namespace {

TEST(EventTimer, NoWindowIsZeroAndAnEndWithoutABeginIsRefused) {
  EventTimer timer(nullptr, "test");
  EXPECT_EQ(timer.total_ms(), 0.0);
  EXPECT_THROW(timer.end(), std::logic_error);
  EXPECT_EQ(timer.total_ms(), 0.0);
}

}  // namespace
}  // namespace mlsb::cuda
#endif
