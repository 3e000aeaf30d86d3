// algbw/busbw conventions (nccl-tests doc/PERFORMANCE.md).
#include <gtest/gtest.h>

#include <stdexcept>

#include "backends/comm/bandwidth.hpp"

namespace mlsb::comm {
namespace {

TEST(CommBandwidth, BusbwFactorsFollowNcclTests) {
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::AllReduce, 4), 1.5);
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::AllReduce, 8), 1.75);
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::AllGather, 4), 0.75);
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::ReduceScatter, 2), 0.5);
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::AllToAll, 8), 0.875);
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::Broadcast, 4), 1.0);
  for (const auto c : {Collective::AllReduce, Collective::AllGather, Collective::ReduceScatter, Collective::AllToAll})
    EXPECT_EQ(busbw_factor(c, 1), 0.0) << to_string(c);  // one rank moves nothing over a bus
  EXPECT_EQ(busbw_factor(Collective::Broadcast, 1), 1.0);
}

TEST(CommBandwidth, AlgbwBytesAreTheInputExceptForAllgather) {
  // nccl-tests' size column: each rank's input buffer; allgather's is its gathered output.
  EXPECT_EQ(algbw_bytes(Collective::AllReduce, 1000, 4), 1000);
  EXPECT_EQ(algbw_bytes(Collective::Broadcast, 1000, 4), 1000);
  EXPECT_EQ(algbw_bytes(Collective::ReduceScatter, 4000, 4), 4000);
  EXPECT_EQ(algbw_bytes(Collective::AllToAll, 8000, 8), 8000);
  EXPECT_EQ(algbw_bytes(Collective::AllGather, 1000, 4), 4000);
}

TEST(CommBandwidth, NamesRoundTrip) {
  for (const char* n : {"allreduce", "allgather", "reduce_scatter", "alltoall", "broadcast"})
    EXPECT_EQ(to_string(parse_collective(n)), n);
  EXPECT_THROW(parse_collective("reduce"), std::invalid_argument);
}

}  // namespace
}  // namespace mlsb::comm
