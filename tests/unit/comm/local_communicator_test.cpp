// The one-rank communicator: every collective is a copy, and bad peers or sizes are CommErrors.
#include <gtest/gtest.h>

#include <atomic>
#include <algorithm>
#include <cstdint>
#include <vector>

#include "backends/comm/communicator.hpp"
#include "backends/formats/small_floats.hpp"

namespace mlsb::comm {
namespace {

TEST(CommLocal, IsOneRankAndCollectivesCopy) {
  auto c = make_communicator("local");
  EXPECT_EQ(c->name(), "local");
  EXPECT_EQ(c->rank(), 0);
  EXPECT_EQ(c->size(), 1);
  EXPECT_FALSE(c->device_buffers());
  c->barrier();
  const std::vector<int64_t> src = {1, -2, 3};
  std::vector<int64_t> dst(3, 0);
  c->allreduce(src.data(), dst.data(), 3, ElemType::I64, ReduceOp::Sum);
  EXPECT_EQ(dst, src);
  std::fill(dst.begin(), dst.end(), 0);
  c->allgather(src.data(), dst.data(), 3, ElemType::I64);
  EXPECT_EQ(dst, src);
  std::fill(dst.begin(), dst.end(), 0);
  c->reduce_scatter(src.data(), dst.data(), 3, ElemType::I64, ReduceOp::Max);
  EXPECT_EQ(dst, src);
  std::fill(dst.begin(), dst.end(), 0);
  const std::vector<size_t> three = {3};
  c->reduce_scatter_v(src.data(), dst.data(), three, ElemType::I64, ReduceOp::Sum);
  EXPECT_EQ(dst, src);
  std::fill(dst.begin(), dst.end(), 0);
  const std::vector<size_t> two_ranks = {3, 3};
  EXPECT_THROW(c->reduce_scatter_v(src.data(), dst.data(), two_ranks, ElemType::I64, ReduceOp::Sum), CommError);
  c->alltoall(src.data(), dst.data(), 3, ElemType::I64);
  EXPECT_EQ(dst, src);
  std::fill(dst.begin(), dst.end(), 0);
  const std::vector<size_t> n = {24};
  c->allgatherv(src.data(), 24, dst.data(), n);
  EXPECT_EQ(dst, src);
  std::fill(dst.begin(), dst.end(), 0);
  c->alltoallv(src.data(), n, dst.data(), n);
  EXPECT_EQ(dst, src);
  std::fill(dst.begin(), dst.end(), 0);
  auto pending = c->ialltoallv(src.data(), n, dst.data(), n);  // completed at once on one rank
  EXPECT_TRUE(pending->test());
  pending->wait();
  EXPECT_EQ(dst, src);
  std::fill(dst.begin(), dst.end(), 0);
  c->sendrecv(src.data(), 24, 0, dst.data(), 24, 0);
  EXPECT_EQ(dst, src);
  auto b = src;
  c->broadcast(b.data(), 3, ElemType::I64, 0);
  EXPECT_EQ(b, src);
  std::vector<int64_t> in_place = src;
  c->allreduce(in_place.data(), in_place.data(), 3, ElemType::I64, ReduceOp::Min);
  EXPECT_EQ(in_place, src);
  c->allreduce(nullptr, nullptr, 0, ElemType::F32, ReduceOp::Sum);  // empty is fine
}

TEST(CommLocal, MaxOverRanksOfOneRankIsTheValue) {
  auto c = make_communicator("local");
  EXPECT_EQ(c->max_over_ranks(2.5), 2.5);
  EXPECT_EQ(c->max_over_ranks(-0.0), -0.0);
}

TEST(CommLocal, HalfFloatSumsOfOneRankAreTheInput) {
  auto c = make_communicator("local");
  for (const ElemType t : {ElemType::BF16, ElemType::F16}) {
    const auto enc = [&](float f) { return t == ElemType::BF16 ? formats::f32_to_bf16(f) : formats::f32_to_fp16(f); };
    const std::vector<uint16_t> src = {enc(1.5f), enc(-0.0f), enc(65504.0f), enc(0x1p-20f), 0x7e00};
    std::vector<uint16_t> dst(src.size());
    c->allreduce(src.data(), dst.data(), src.size(), t, ReduceOp::Sum);
    EXPECT_EQ(dst, src) << to_string(t);
    EXPECT_EQ(elem_size(t), 2u);
  }
}

TEST(CommLocal, BadPeersAndSizesAreErrors) {
  auto c = make_communicator("local");
  int x = 0, y = 0;
  EXPECT_THROW(c->broadcast(&x, 1, ElemType::I32, 1), CommError);
  EXPECT_THROW(c->sendrecv(&x, 4, 1, &y, 4, 0), CommError);
  EXPECT_THROW(c->sendrecv(&x, 4, 0, &y, 2, 0), CommError);
  const std::vector<size_t> two = {4, 4}, one = {2};
  EXPECT_THROW(c->allgatherv(&x, 4, &y, two), CommError);
  EXPECT_THROW(c->allgatherv(&x, 4, &y, one), CommError);
  EXPECT_THROW(c->alltoallv(&x, two, &y, two), CommError);
}

TEST(CommLocal, ExpectSameAndDuplicate) {
  auto c = make_communicator("local");
  EXPECT_NO_THROW(c->expect_same("size", 42));
  c->set_timeout(3);
  auto d = duplicate(*c);
  EXPECT_EQ(d->name(), "local");
  EXPECT_EQ(d->timeout(), 3);
  std::atomic<bool> flag{true};
  d->set_cancel_flag(&flag);
  EXPECT_TRUE(d->cancelled());
  EXPECT_FALSE(c->cancelled());
}

// A part of the case's communicator (a rank group) stops with the case: it inherits the cancel flag, the
// timeout and the settle time; a negative color is refused.
TEST(CommLocal, SplitInheritsTimeoutSettleTimeAndCancelFlag) {
  auto c = make_communicator("local");
  c->set_timeout(4);
  c->set_settle_time(0.5);
  std::atomic<bool> flag{false};
  c->set_cancel_flag(&flag);
  auto part = split(*c, 0, 0);
  EXPECT_EQ(part->size(), 1);
  EXPECT_EQ(part->timeout(), 4);
  EXPECT_EQ(part->settle_time(), 0.5);
  EXPECT_FALSE(part->cancelled());
  flag = true;
  EXPECT_TRUE(part->cancelled());
  EXPECT_THROW(split(*c, -1, 0), std::invalid_argument);
}

TEST(CommLocal, ElemTypeNamesAndUnknownKinds) {
  EXPECT_EQ(to_string(ElemType::BF16), "bf16");
  EXPECT_EQ(to_string(ElemType::U8), "u8");
  EXPECT_EQ(elem_size(ElemType::F64), 8u);
  EXPECT_EQ(elem_size(ElemType::U8), 1u);
  EXPECT_THROW(make_communicator("tcp"), std::invalid_argument);
#ifndef MLSB_HAVE_NCCL
  try {
    make_communicator("nccl");
    FAIL() << "nccl without NCCL must throw";
  } catch (const CommError& e) {
    EXPECT_NE(std::string(e.what()).find("without CUDA/NCCL"), std::string::npos) << e.what();
  }
#endif
}

}  // namespace
}  // namespace mlsb::comm
