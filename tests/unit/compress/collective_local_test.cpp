// Compressed collectives on one local rank: every collective and algorithm returns its input (the
// one-rank result), lossless bit for bit; invalid combinations are rejected with a reason.
// Several ranks: tests/integration/compress/compress_mpi_test.cpp runs them under mpirun.
#include <gtest/gtest.h>

#include <cstring>

#include "backends/comm/communicator.hpp"
#include "workloads/compress/collectives/compressed_collective.hpp"
#include "workloads/compress/inputs.hpp"

namespace mlsb::compress {
namespace {

using comm::Collective;

Tensor gaussian(DType t, int64_t n) { return generate("gaussian", t, n, 0.02, 7); }

std::vector<uint8_t> run_once(CompressedCollective& c, const Tensor& in, Collective op, int ranks) {
  const int64_t out_count = collective_output_count(op, in.count(), ranks);
  std::vector<uint8_t> out(static_cast<size_t>(out_count) * dtype_size(in.dtype));
  c.run(in.view(), {out.data(), out_count, in.dtype});
  return out;
}

TEST(CompressCollectiveLocal, EveryCollectiveReturnsTheInputOnOneRank) {
  auto comm = comm::make_communicator("local");
  const Tensor in = gaussian(DType::BF16, 10'001);
  for (const char* op_name : {"allreduce", "allgather", "reduce_scatter", "alltoall", "broadcast"}) {
    const Collective op = comm::parse_collective(op_name);
    for (const char* codec : {"none", "exponent", "zstd", "int8-block"}) {
      CompressedCollective c(*comm, op, default_algorithm(op, codec), CodecConfig{codec});
      const auto out = run_once(c, in, op, 1);
      if (is_lossless(codec))
        EXPECT_EQ(0, std::memcmp(out.data(), in.data.data(), in.data.size())) << op_name << " " << codec;
      else
        EXPECT_EQ(out.size(), in.data.size()) << op_name << " " << codec;
    }
  }
}

TEST(CompressCollectiveLocal, RingAndLinearAllreduce) {
  auto comm = comm::make_communicator("local");
  const Tensor in = gaussian(DType::F32, 4096);
  CompressedCollective ring(*comm, Collective::AllReduce, Algorithm::Ring, CodecConfig{"exponent"});
  EXPECT_EQ(run_once(ring, in, Collective::AllReduce, 1), in.data);
  CodecConfig rk{"randomk"};
  rk.density = 0.25;
  rk.error_feedback = false;
  CompressedCollective linear(*comm, Collective::AllReduce, Algorithm::Linear, rk);
  const auto out = run_once(linear, in, Collective::AllReduce, 1);
  const auto idx = randomk_indices(in.count(), sparse_k(in.count(), 0.25), rk.seed, 0);
  int64_t kept = 0;
  for (int64_t i = 0; i < in.count(); ++i) kept += load_float(out.data(), DType::F32, i) != 0.0f;
  EXPECT_EQ(kept, static_cast<int64_t>(idx.size()));
  for (int64_t i : idx) EXPECT_EQ(load_float(out.data(), DType::F32, i), load_float(in.data.data(), DType::F32, i));
}

TEST(CompressCollectiveLocal, RejectsCombinationsThatCannotRun) {
  auto comm = comm::make_communicator("local");
  EXPECT_THROW(CompressedCollective(*comm, Collective::AllGather, Algorithm::Ring, CodecConfig{"exponent"}),
               std::invalid_argument);
  EXPECT_THROW(CompressedCollective(*comm, Collective::AllReduce, Algorithm::Ring, CodecConfig{"topk"}),
               std::invalid_argument);
  EXPECT_THROW(CompressedCollective(*comm, Collective::AllReduce, Algorithm::Linear, CodecConfig{"exponent"}),
               std::invalid_argument);
  EXPECT_THROW(CompressedCollective(*comm, Collective::AllReduce, Algorithm::Native, CodecConfig{"zstd"}),
               std::invalid_argument);
  CompressedCollective ok(*comm, Collective::AllReduce, Algorithm::Gather, CodecConfig{"exponent"});
  const Tensor in = gaussian(DType::BF16, 100);
  std::vector<uint8_t> small(10);
  EXPECT_THROW(ok.run(in.view(), {small.data(), 5, DType::BF16}), std::invalid_argument);
}

TEST(CompressCollectiveLocal, DefaultAlgorithmFollowsTheCodec) {
  EXPECT_EQ(default_algorithm(Collective::AllReduce, "none"), Algorithm::Native);
  EXPECT_EQ(default_algorithm(Collective::AllReduce, "randomk"), Algorithm::Linear);
  EXPECT_EQ(default_algorithm(Collective::AllReduce, "powersgd"), Algorithm::Linear);
  EXPECT_EQ(default_algorithm(Collective::AllGather, "randomk"), Algorithm::Gather);
  EXPECT_EQ(default_algorithm(Collective::AllReduce, "exponent"), Algorithm::Ring);
  EXPECT_EQ(default_algorithm(Collective::AllReduce, "int8-block"), Algorithm::Ring);
  EXPECT_EQ(default_algorithm(Collective::AllReduce, "topk"), Algorithm::Gather);
  EXPECT_THROW(parse_algorithm("tree"), std::invalid_argument);
}

}  // namespace
}  // namespace mlsb::compress
