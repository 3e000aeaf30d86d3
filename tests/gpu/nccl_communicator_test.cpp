// The nccl communicator on one rank and one GPU (bootstrapped over the local communicator): every
// collective on device buffers. Skips where there is no GPU or no NCCL in the build.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "backends/cuda/device.hpp"

#ifdef MLSB_HAVE_NCCL
#include <cuda_runtime_api.h>

#include "backends/comm/local_communicator.hpp"
#include "backends/comm/nccl_communicator.hpp"
#include "backends/cuda/device_buffer.hpp"
#endif

namespace mlsb::comm {
namespace {

#ifdef MLSB_HAVE_NCCL

/// A device copy of host values, read back with host() (DeviceBuffer's copies wait for every stream, NCCL's too).
template <typename T>
struct Dev {
  cuda::DeviceBuffer buf;
  T* p;
  size_t n;
  explicit Dev(const std::vector<T>& v) : buf(v.size() * sizeof(T) + 1), p(buf.as<T>()), n(v.size()) {
    buf.upload(v.data(), n * sizeof(T));
  }
  std::vector<T> host() const {
    std::vector<T> v(n);
    buf.download(v.data(), n * sizeof(T));
    return v;
  }
};

TEST(GpuNccl, OneRankCollectivesOnDeviceBuffers) {
  std::string why;
  if (!cuda::cuda_available(&why)) GTEST_SKIP() << "no GPU: " << why;
  auto boot = make_local_communicator();
  auto nccl = make_nccl_communicator(*boot);
  ASSERT_EQ(nccl->name(), "nccl");
  EXPECT_TRUE(nccl->device_buffers());
  EXPECT_EQ(nccl->size(), 1);
  const std::vector<float> v = {1, -2, 3.5f, 4};
  Dev<float> a(v), b(std::vector<float>(4, 0));
  nccl->allreduce(a.p, b.p, 4, ElemType::F32, ReduceOp::Sum);
  EXPECT_EQ(b.host(), v);
  nccl->allgather(a.p, b.p, 4, ElemType::F32);
  EXPECT_EQ(b.host(), v);
  nccl->reduce_scatter(a.p, b.p, 4, ElemType::F32, ReduceOp::Max);
  EXPECT_EQ(b.host(), v);
  nccl->alltoall(a.p, b.p, 4, ElemType::F32);
  EXPECT_EQ(b.host(), v);
  const size_t counts[] = {4};
  nccl->reduce_scatter_v(a.p, b.p, counts, ElemType::F32, ReduceOp::Sum);
  EXPECT_EQ(b.host(), v);
  nccl->broadcast(a.p, 4, ElemType::F32, 0);
  EXPECT_EQ(a.host(), v);
  const size_t bytes[] = {16};
  nccl->allgatherv(a.p, 16, b.p, bytes);
  EXPECT_EQ(b.host(), v);
  nccl->alltoallv(a.p, bytes, b.p, bytes);
  EXPECT_EQ(b.host(), v);
  nccl->sendrecv(a.p, 16, 0, b.p, 16, 0);
  EXPECT_EQ(b.host(), v);
  nccl->barrier();
  nccl->expect_same("size", 42);
  EXPECT_THROW(nccl->broadcast(a.p, 4, ElemType::F32, 1), CommError);
  EXPECT_THROW(nccl->sendrecv(a.p, 16, 0, b.p, 8, 0), CommError);
  auto dup = duplicate(*nccl);
  dup->allreduce(a.p, b.p, 4, ElemType::F32, ReduceOp::Min);
  EXPECT_EQ(b.host(), v);
}

// The non-blocking all-to-allv on the communication stream: requests complete in order, test() polls, a
// request dropped in flight settles without breaking the communicator, and its host side takes host buffers
// and follows its timeout.
TEST(GpuNccl, NonBlockingAlltoallvAndTheHostSide) {
  std::string why;
  if (!cuda::cuda_available(&why)) GTEST_SKIP() << "no GPU: " << why;
  auto boot = make_local_communicator();
  auto nccl = make_nccl_communicator(*boot);
  std::vector<float> v(1 << 20);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i % 977);
  Dev<float> a(v), b(std::vector<float>(v.size(), 0)), c(std::vector<float>(v.size(), 0));
  const size_t bytes[] = {v.size() * sizeof(float)};
  auto first = nccl->ialltoallv(a.p, bytes, b.p, bytes);
  auto second = nccl->ialltoallv(b.p, bytes, c.p, bytes);  // ordered after the first on the stream
  bool done = false;
  for (int i = 0; i < 1000000 && !done; ++i) done = second->test();
  if (!done) second->wait();
  EXPECT_TRUE(first->test()) << "the second completed before the first";
  first->wait();
  EXPECT_EQ(c.host(), v);
  { auto dropped = nccl->ialltoallv(a.p, bytes, b.p, bytes); }  // one rank: settles at once
  nccl->alltoallv(a.p, bytes, b.p, bytes);
  EXPECT_EQ(b.host(), v);
  const size_t wrong[] = {bytes[0], 4};
  EXPECT_THROW(nccl->ialltoallv(a.p, wrong, b.p, wrong), CommError);

  Communicator& host = nccl->host_side();
  EXPECT_FALSE(host.device_buffers());
  EXPECT_NE(&host, boot.get()) << "a duplicate of the bootstrap, not the bootstrap";
  nccl->set_timeout(7);
  EXPECT_EQ(host.timeout(), 7);
  int64_t mine = 41, all = 0;
  host.allgather(&mine, &all, 1, ElemType::I64);
  EXPECT_EQ(all, 41);
}

#else

TEST(GpuNccl, OneRankCollectivesOnDeviceBuffers) { GTEST_SKIP() << "built without NCCL"; }

#endif

}  // namespace
}  // namespace mlsb::comm
