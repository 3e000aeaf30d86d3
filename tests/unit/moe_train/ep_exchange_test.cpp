// EpExchange's chunked pipeline with a RowMemory whose copies complete only at ready(), as copies queued on
// a GPU stream do (DeviceRows): every all-to-all must find its staging complete, and what the experts and
// the caller read must come after the copies that wrote it. One rank on the local communicator, so the
// all-to-all copies at its start: a missing ready() sends stale rows.
#include "workloads/moe_train/ep_exchange.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <functional>
#include <memory>
#include <vector>

#include "backends/comm/local_communicator.hpp"
#include "support/expert_rows.hpp"
#include "workloads/moe_train/overlap.hpp"

namespace mlsb::moe_train {
namespace {

class DeferredRows final : public RowMemory {
 public:
  unsigned char* stage(int which, size_t bytes) override {
    auto& b = buffers_.at(static_cast<size_t>(which));
    if (b.size() < bytes) ready(), b.assign(bytes, 0xAB);
    return b.data();
  }
  void copy(void* to, const void* from, size_t bytes) override {
    // Like a stream, the copy reads its source when it runs.
    queued_.push_back([to, from, bytes] { std::memcpy(to, from, bytes); });
  }
  void ready() override {
    for (auto& c : queued_) c();
    queued_.clear();
    ++readies;
  }
  size_t bytes() const override {
    size_t n = 0;
    for (const auto& b : buffers_) n += b.size();
    return n;
  }
  int readies = 0;

 private:
  std::array<std::vector<unsigned char>, 4> buffers_;
  std::vector<std::function<void()>> queued_;
};

TEST(EpExchangeRowMemory, CopiesThatCompleteAtReadyCarryEveryRowOutAndHome) {
  auto comm = comm::make_local_communicator();
  const test::ExpertRows sent({4, 0, 9, 1, 6}, 24, 5);  // rows per local expert (one rank: every expert)
  const auto& [counts, row, offsets, out] = sent;
  const size_t total = sent.total();
  for (const int64_t chunks : {1, 2, 3, 7}) {
    auto memory = std::make_unique<DeferredRows>();
    DeferredRows& rows = *memory;
    CommTimes times;
    EpExchange wire(*comm, {}, times, std::move(memory));
    std::vector<unsigned char> in(total, 0), results(total, 0), back(total, 0);
    std::vector<int64_t> computed;
    wire.chunked(
        plan_chunks(counts, 1, 0, sent.experts(), chunks), row, out.data(), offsets, in.data(), offsets,
        [&](int64_t j) {
          rows.ready();  // the expert's work is ordered after the copies that landed its rows
          computed.push_back(j);
          for (int64_t b = offsets[j] * static_cast<int64_t>(row); b < offsets[j + 1] * static_cast<int64_t>(row); ++b)
            results[b] = static_cast<unsigned char>(in[b] + 1);
        },
        results.data(), back.data(), [] {}, -1);
    rows.ready();
    EXPECT_EQ(computed, (std::vector<int64_t>{0, 1, 2, 3, 4})) << "chunks=" << chunks;
    size_t wrong = 0;
    for (size_t b = 0; b < total; ++b) wrong += back[b] != static_cast<unsigned char>(out[b] + 1);
    EXPECT_EQ(wrong, 0u) << "chunks=" << chunks << ": bytes that came home stale or misplaced";
    EXPECT_GE(rows.readies, 2 * chunks) << "a ready() before every dispatch and combine";
    // The staging the rows went through counts toward the layer's memory (at least one way out and home).
    EXPECT_GE(wire.staging_bytes(), 2 * total) << "chunks=" << chunks;
    EXPECT_EQ(wire.staging_bytes(), rows.bytes());
  }
}

}  // namespace
}  // namespace mlsb::moe_train
