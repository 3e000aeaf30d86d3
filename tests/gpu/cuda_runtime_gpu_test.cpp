// The CUDA runtime as the project relies on it, on a real GPU: a completion query that says NotReady leaves
// no NotReady behind once cuda::query_done read it (and whether the runtime records one at all: the answer
// is printed for the gpu-check log), and the libraries loaded at run time (cuBLAS) or probed (NCCL) are there.
// Skips (with the reason) where no CUDA device is present.
#include <gtest/gtest.h>

#ifdef MLSB_HAVE_CUDA
#include <chrono>
#include <cstdio>
#include <thread>

#include "backends/cuda/check.hpp"
#include "backends/cuda/cublas_api.hpp"
#include "backends/cuda/probe.hpp"
#include "backends/cuda/stream.hpp"

namespace mlsb::cuda {
namespace {

extern "C" void CUDART_CB hold_the_stream(void*) { std::this_thread::sleep_for(std::chrono::milliseconds(300)); }

TEST(CudaRuntimeOnGpu, AQueryThatSaysNotReadyLeavesTheLastErrorClean) {
  if (probe().gpus.empty()) GTEST_SKIP() << "no GPU: " << probe().note;
  Stream stream;
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  ASSERT_EQ(cudaLaunchHostFunc(stream.get(), hold_the_stream, nullptr), cudaSuccess);
  const cudaError_t answer = cudaStreamQuery(stream.get());
  ASSERT_EQ(answer, cudaErrorNotReady) << "the stream should still be busy for 300 ms";
  const cudaError_t recorded = cudaPeekAtLastError();
  std::printf("[gpu probe] cudaStreamQuery's NotReady %s the runtime's last-error slot (%s)\n",
              recorded == cudaErrorNotReady ? "is recorded in" : "is not recorded in", cudaGetErrorName(recorded));
  cudaError_t error = cudaSuccess;
  EXPECT_FALSE(query_done(answer, &error));
  EXPECT_EQ(error, cudaSuccess);
  EXPECT_EQ(cudaPeekAtLastError(), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream.get()), cudaSuccess);
  EXPECT_TRUE(query_done(cudaStreamQuery(stream.get()), &error));
}

TEST(CudaRuntimeOnGpu, CublasAndNcclLoad) {
  if (probe().gpus.empty()) GTEST_SKIP() << "no GPU: " << probe().note;
  EXPECT_NO_THROW(cublas()) << "cuBLAS cannot be loaded: the offload and training workloads would skip every case";
#ifdef MLSB_HAVE_NCCL
  EXPECT_FALSE(probe().nccl_version.empty()) << "libnccl.so.2 cannot be loaded";
#endif
  std::printf("[gpu probe] driver %s, runtime %s, NCCL %s\n", probe().driver_version.c_str(),
              probe().runtime_version.c_str(), probe().nccl_version.c_str());
}

}  // namespace
}  // namespace mlsb::cuda
#endif
