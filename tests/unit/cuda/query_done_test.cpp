// Reading a completion query leaves no NotReady in the CUDA runtime's last-error slot: the NCCL
// communicator polls with cudaEventQuery/cudaStreamQuery, and a NotReady left behind would make the GPU
// layer's next check_launch throw "device not ready" on every expert-parallel step. A fake slot stands in
// for the runtime's (this machine has no GPU); it records NotReady as the runtime may.
#include <gtest/gtest.h>

#ifdef MLSB_HAVE_CUDA
#include "backends/cuda/check.hpp"

namespace mlsb::cuda {
namespace {

struct FakeSlot {
  cudaError_t* value;
  cudaError_t peek() const { return *value; }
  cudaError_t take() const {
    const cudaError_t v = *value;
    *value = cudaSuccess;
    return v;
  }
};

TEST(QueryDone, NotReadyLeavesNoNotReadyBehind) {
  cudaError_t slot = cudaErrorNotReady;  // what the query itself may have recorded
  cudaError_t error = cudaErrorUnknown;
  EXPECT_FALSE(query_done(cudaErrorNotReady, &error, FakeSlot{&slot}));
  EXPECT_EQ(error, cudaSuccess);
  EXPECT_EQ(slot, cudaSuccess);
}

TEST(QueryDone, ALaunchErrorInTheSlotStaysForCheckLaunch) {
  cudaError_t slot = cudaErrorLaunchOutOfResources;
  cudaError_t error = cudaSuccess;
  EXPECT_FALSE(query_done(cudaErrorNotReady, &error, FakeSlot{&slot}));
  EXPECT_EQ(error, cudaSuccess);
  EXPECT_EQ(slot, cudaErrorLaunchOutOfResources);
}

TEST(QueryDone, DoneIsTrueAndAFailureIsReportedWithTheSlotCleared) {
  cudaError_t slot = cudaSuccess, error = cudaErrorUnknown;
  EXPECT_TRUE(query_done(cudaSuccess, &error, FakeSlot{&slot}));
  EXPECT_EQ(error, cudaSuccess);
  slot = cudaErrorIllegalAddress;
  EXPECT_FALSE(query_done(cudaErrorIllegalAddress, &error, FakeSlot{&slot}));
  EXPECT_EQ(error, cudaErrorIllegalAddress);
  EXPECT_EQ(slot, cudaSuccess);
}

}  // namespace
}  // namespace mlsb::cuda
#endif
