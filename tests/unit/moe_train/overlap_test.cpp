// The chunk plan of overlapped expert parallelism: chunks partition every rank pair's rows, an expert is
// computed only once all of its rows have arrived, experts stay in order, more chunks than rows leave
// chunks empty; and the options' bad values are errors naming the axis.
#include "workloads/moe_train/overlap.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>
#include <stdexcept>

namespace mlsb::moe_train {
namespace {

// Every property of the plan of `rank` for counts [ranks][ranks * L].
void expect_consistent(const std::vector<int64_t>& counts, int ranks, int rank, int64_t L, int64_t chunks) {
  const ChunkPlan p = plan_chunks(counts, ranks, rank, L, chunks);
  for (int r = 0; r < ranks; ++r) {
    int64_t out = 0, in = 0;
    for (int64_t j = 0; j < L; ++j) out += p.rows(rank, r, j), in += p.rows(r, rank, j);
    int64_t sent = 0, received = 0;
    for (int64_t c = 0; c < chunks; ++c) {
      EXPECT_EQ(p.send_begin(c, r), sent) << "chunks are contiguous and in order";
      EXPECT_EQ(p.recv_begin(c, r), received);
      EXPECT_GE(p.send_rows(c, r), 0);
      sent += p.send_rows(c, r), received += p.recv_rows(c, r);
    }
    EXPECT_EQ(sent, out) << "every row is sent once";
    EXPECT_EQ(received, in);
  }
  for (int d = 0; d < ranks; ++d) {
    EXPECT_EQ(p.first_expert(d, 0), 0);
    EXPECT_EQ(p.first_expert(d, chunks), L);
    for (int64_t i = 0; i < chunks; ++i) {
      EXPECT_LE(p.first_expert(d, i), p.first_expert(d, i + 1));
      // Each expert computed at step i has every row from every source in chunks 0..i.
      for (int64_t j = p.first_expert(d, i); j < p.first_expert(d, i + 1); ++j)
        for (int s = 0; s < ranks; ++s) {
          int64_t end = 0, total = 0;
          for (int64_t k = 0; k <= j; ++k) end += p.rows(s, d, k);
          for (int64_t k = 0; k < L; ++k) total += p.rows(s, d, k);
          EXPECT_LE(end, total * (i + 1) / chunks) << "expert " << j << " of rank " << d << " at step " << i;
        }
    }
  }
}

TEST(MoeOverlapPlan, ChunksPartitionRowsAndExpertsWaitForAllTheirRows) {
  std::mt19937_64 rng(3);
  for (int ranks : {1, 2, 4})
    for (int64_t L : {1, 2, 3})
      for (int64_t chunks : {1, 2, 5, 64}) {
        std::vector<int64_t> counts(ranks * ranks * L);
        for (auto& n : counts) n = static_cast<int64_t>(rng() % 4 == 0 ? 0 : rng() % 40);
        for (int rank = 0; rank < ranks; ++rank) expect_consistent(counts, ranks, rank, L, chunks);
      }
}

TEST(MoeOverlapPlan, MoreChunksThanRowsAndNoRowsAtAllWork) {
  const std::vector<int64_t> few = {1, 0, 0, 2};  // 2 ranks, 1 expert each: 3 rows in all
  expect_consistent(few, 2, 0, 1, 64);
  expect_consistent(few, 2, 1, 1, 64);
  const ChunkPlan p = plan_chunks(few, 2, 0, 1, 64);
  int64_t nonempty = 0;
  for (int64_t c = 0; c < 64; ++c) nonempty += p.send_rows(c, 0) > 0;
  EXPECT_EQ(nonempty, 1);
  const std::vector<int64_t> none(2 * 2 * 3, 0);
  expect_consistent(none, 2, 1, 3, 7);
  EXPECT_EQ(plan_chunks(none, 2, 1, 3, 7).first_expert(1, 1), 3) << "experts without rows run at the first step";
}

TEST(MoeOverlapPlan, OneChunkComputesEveryExpertAtOnce) {
  const ChunkPlan p = plan_chunks({5, 1, 2, 7, 0, 3, 4, 4}, 2, 1, 2, 1);
  EXPECT_EQ(p.first_expert(0, 0), 0);
  EXPECT_EQ(p.first_expert(0, 1), 2);
  EXPECT_EQ(p.send_rows(0, 0), 3);  // rank 1's rows of global experts 0, 1 (rank 0's): 0 + 3
  EXPECT_EQ(p.send_rows(0, 1), 8);  // and of experts 2, 3 (its own): 4 + 4
  EXPECT_EQ(p.recv_rows(0, 0), 2 + 7);
}

TEST(MoeOverlapOptions, BadValuesNameTheAxis) {
  EXPECT_EQ(parse_overlap("none"), Overlap::None);
  EXPECT_EQ(parse_overlap("chunked"), Overlap::Chunked);
  EXPECT_THAT([] { parse_overlap("pipelined"); },
              testing::ThrowsMessage<std::invalid_argument>(testing::StartsWith("overlap:")));
  for (int64_t chunks : {int64_t{0}, int64_t{-1}, kMaxChunks + 1}) {
    EpOptions o;
    o.chunks = chunks;
    EXPECT_THAT([&] { validate(o); }, testing::ThrowsMessage<std::invalid_argument>(testing::StartsWith("chunks:")));
  }
  EpOptions most;
  most.chunks = kMaxChunks;
  EXPECT_NO_THROW(validate(most));
  EXPECT_THROW(plan_chunks({1, 2, 3}, 2, 0, 1, 2), std::invalid_argument) << "counts of the wrong size";
  EpOptions slots;
  slots.chunks = 3;
  slots.shared_slot = {-1, pipeline_waits(3) - 1};
  EXPECT_NO_THROW(validate(slots));
  slots.shared_slot = {pipeline_waits(3), 0};
  EXPECT_THAT([&] { validate(slots); },
              testing::ThrowsMessage<std::invalid_argument>(testing::StartsWith("shared_slot_fwd:")));
  slots.shared_slot = {0, -2};
  EXPECT_THAT([&] { validate(slots); },
              testing::ThrowsMessage<std::invalid_argument>(testing::StartsWith("shared_slot_bwd:")));
}

}  // namespace
}  // namespace mlsb::moe_train
