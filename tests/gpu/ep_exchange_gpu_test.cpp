// EpExchange with its rows in device memory (DeviceRows) on a one-rank nccl communicator: both schedules
// carry every row out to the experts' layout and home again through ncclSend/ncclRecv on the communication
// stream, the chunked pipeline's staging copies on the layer's stream. Two ranks need two GPUs
// (tests/mpi/moe_ep_gpu_check nccl). Skips without a GPU or NCCL in the build.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "backends/cuda/device.hpp"

#ifdef MLSB_HAVE_NCCL
#include <cuda_runtime_api.h>

#include <memory>

#include "backends/comm/local_communicator.hpp"
#include "backends/comm/nccl_communicator.hpp"
#include "backends/cuda/copy.hpp"
#include "backends/cuda/device_buffer.hpp"
#include "backends/cuda/stream.hpp"
#include "support/expert_rows.hpp"
#include "workloads/moe_train/cuda/device_rows.hpp"
#include "workloads/moe_train/ep_exchange.hpp"
#include "workloads/moe_train/overlap.hpp"
#endif

namespace mlsb::moe_train {
namespace {

#ifdef MLSB_HAVE_NCCL

TEST(GpuEpExchange, DeviceRowsCarryEveryRowOutAndHome) {
  std::string why;
  if (!cuda::cuda_available(&why)) GTEST_SKIP() << "no GPU: " << why;
  auto boot = comm::make_local_communicator();
  auto nccl = comm::make_nccl_communicator(*boot);
  cuda::Stream stream;
  const test::ExpertRows rows({5, 0, 7, 3}, 32, 3);  // rows per local expert (one rank: every expert)
  const auto& [counts, row, offsets, sent] = rows;
  const size_t total = rows.total();
  cuda::DeviceBuffer out(total), in(total), results(total), back(total);
  out.upload(sent.data(), total);
  CommTimes times;
  EpExchange wire(*nccl, comm::make_link_model(100, 5), times, std::make_unique<gpu::DeviceRows>(stream.get()));
  auto* in_p = in.as<unsigned char>();
  auto* results_p = results.as<unsigned char>();
  for (const int64_t chunks : {1, 2, 5}) {
    std::vector<unsigned char> zeros(total, 0), home(total);
    back.upload(zeros.data(), total), in.upload(zeros.data(), total);
    const ChunkPlan plan = plan_chunks(counts, 1, 0, rows.experts(), chunks);
    wire.chunked(
        plan, row, out.data(), offsets, in.data(), offsets,
        [&](int64_t j) {  // the expert "computes" its rows unchanged, on the layer's stream
          const size_t at = static_cast<size_t>(offsets[j]) * row, n = static_cast<size_t>(counts[j]) * row;
          if (n == 0) return;
          ASSERT_EQ(cuda::copy_on(stream.get(), results_p + at, in_p + at, n, cuda::Landed::Later, "expert"), cudaSuccess);
        },
        results.data(), back.data(), [] {}, -1);
    ASSERT_EQ(cudaStreamSynchronize(stream.get()), cudaSuccess);
    back.download(home.data(), total);
    EXPECT_EQ(home, sent) << "chunks=" << chunks;
  }
  const std::vector<size_t> bytes = {total};
  std::vector<unsigned char> landed(total);
  wire.alltoallv(out.data(), bytes, in.data(), bytes);
  in.download(landed.data(), total);
  EXPECT_EQ(landed, sent);
  EXPECT_GT(times.comm_s, 0);
  EXPECT_GT(times.blocked_s, 0);
}

#else

TEST(GpuEpExchange, DeviceRowsCarryEveryRowOutAndHome) { GTEST_SKIP() << "built without NCCL"; }

#endif

}  // namespace
}  // namespace mlsb::moe_train
