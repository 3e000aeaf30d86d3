// Element-wise reduction kernels (backends/comm/reduce.hpp).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <cstdint>
#include <limits>
#include <vector>

#include "backends/formats/small_floats.hpp"
#include "backends/comm/reduce.hpp"

namespace mlsb::comm {
namespace {

TEST(CommReduce, Bf16SumRoundsOncePerStep) {
  // 1 + 2^-8 is a tie in bf16 and rounds to even (1); adding it twice one step at a time stays at 1,
  // while fp32 accumulation of both in one step would give 1 + 2^-7.
  std::vector<uint16_t> acc = {formats::f32_to_bf16(1.0f), formats::f32_to_bf16(3.0f), formats::f32_to_bf16(-2.5f)};
  const std::vector<uint16_t> in = {formats::f32_to_bf16(0x1p-8f), formats::f32_to_bf16(0.25f), formats::f32_to_bf16(2.5f)};
  reduce_into(acc.data(), in.data(), acc.size(), ElemType::BF16, ReduceOp::Sum);
  EXPECT_EQ(formats::bf16_to_f32(acc[0]), 1.0f);
  EXPECT_EQ(formats::bf16_to_f32(acc[1]), 3.25f);
  EXPECT_EQ(formats::bf16_to_f32(acc[2]), 0.0f);
}

TEST(CommReduce, Fp16SumOverflowsToInfAndMaxMin) {
  std::vector<uint16_t> acc = {formats::f32_to_fp16(60000.0f), formats::f32_to_fp16(-1.0f)};
  const std::vector<uint16_t> in = {formats::f32_to_fp16(60000.0f), formats::f32_to_fp16(2.0f)};
  auto a = acc;
  reduce_into(a.data(), in.data(), 2, ElemType::F16, ReduceOp::Sum);
  EXPECT_TRUE(std::isinf(formats::fp16_to_f32(a[0])));
  EXPECT_EQ(formats::fp16_to_f32(a[1]), 1.0f);
  a = acc;
  reduce_into(a.data(), in.data(), 2, ElemType::F16, ReduceOp::Max);
  EXPECT_EQ(formats::fp16_to_f32(a[1]), 2.0f);
  a = acc;
  reduce_into(a.data(), in.data(), 2, ElemType::F16, ReduceOp::Min);
  EXPECT_EQ(formats::fp16_to_f32(a[1]), -1.0f);
}

TEST(CommReduce, FloatMaxPropagatesNanAndIntegersWrap) {
  std::vector<float> f = {1.0f, NAN};
  const std::vector<float> g = {NAN, 2.0f};
  reduce_into(f.data(), g.data(), 2, ElemType::F32, ReduceOp::Max);
  EXPECT_TRUE(std::isnan(f[0]));
  EXPECT_TRUE(std::isnan(f[1]));
  std::vector<int32_t> i = {std::numeric_limits<int32_t>::max(), -5};
  const std::vector<int32_t> j = {1, 3};
  reduce_into(i.data(), j.data(), 2, ElemType::I32, ReduceOp::Sum);
  EXPECT_EQ(i[0], std::numeric_limits<int32_t>::min());
  EXPECT_EQ(i[1], -2);
  std::vector<uint8_t> u = {250, 7};
  const std::vector<uint8_t> v = {10, 9};
  reduce_into(u.data(), v.data(), 2, ElemType::U8, ReduceOp::Sum);
  EXPECT_EQ(u[0], 4);
  reduce_into(u.data(), v.data(), 2, ElemType::U8, ReduceOp::Min);
  EXPECT_EQ(u[1], 9);
  std::vector<int64_t> l = {-(int64_t{1} << 40)};
  const std::vector<int64_t> m = {int64_t{1} << 41};
  reduce_into(l.data(), m.data(), 1, ElemType::I64, ReduceOp::Sum);
  EXPECT_EQ(l[0], int64_t{1} << 40);
  std::vector<double> d = {0.5};
  const std::vector<double> e = {0.25};
  reduce_into(d.data(), e.data(), 1, ElemType::F64, ReduceOp::Min);
  EXPECT_EQ(d[0], 0.25);
}

TEST(CommReduce, UnalignedBuffers) {
  alignas(8) unsigned char a[1 + 2 * sizeof(double)] = {}, b[1 + 2 * sizeof(double)] = {};
  const double x[2] = {1.5, -2.0}, y[2] = {2.0, 4.0};
  std::memcpy(a + 1, x, sizeof x);
  std::memcpy(b + 1, y, sizeof y);
  reduce_into(a + 1, b + 1, 2, ElemType::F64, ReduceOp::Sum);
  double r[2];
  std::memcpy(r, a + 1, sizeof r);
  EXPECT_EQ(r[0], 3.5);
  EXPECT_EQ(r[1], 2.0);
}

}  // namespace
}  // namespace mlsb::comm
