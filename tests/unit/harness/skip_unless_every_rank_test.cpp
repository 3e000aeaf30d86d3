// State::skip_unless_every_rank votes over the case communicator's host side: on an NCCL communicator the
// case's own collectives take device buffers, and a host int handed to one would fault the GPU. Two fakes
// stand in for the ranks: a "device" communicator that refuses every collective, and its host side, which
// plays the other rank's vote.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "backends/comm/communicator.hpp"
#include "harness/workload.hpp"

namespace mlsb {
namespace {

using comm::ElemType;
using comm::ReduceOp;

// Every collective fails unless overridden: the test sees which communicator was used.
class Refusing : public comm::Communicator {
 public:
  std::string name() const override { return "fake"; }
  int rank() const override { return 0; }
  int size() const override { return 2; }
  void barrier() override { refuse(); }
  void allreduce(const void*, void*, size_t, ElemType, ReduceOp) override { refuse(); }
  void allgather(const void*, void*, size_t, ElemType) override { refuse(); }
  void allgatherv(const void*, size_t, void*, std::span<const size_t>) override { refuse(); }
  void reduce_scatter(const void*, void*, size_t, ElemType, ReduceOp) override { refuse(); }
  void alltoall(const void*, void*, size_t, ElemType) override { refuse(); }
  void alltoallv(const void*, std::span<const size_t>, void*, std::span<const size_t>) override { refuse(); }
  void broadcast(void*, size_t, ElemType, int) override { refuse(); }
  void sendrecv(const void*, size_t, int, void*, size_t, int) override { refuse(); }

 private:
  [[noreturn]] static void refuse() { throw std::logic_error("a host value handed to a device collective"); }
};

// The host side: an allreduce (max) with one other rank whose vote is `other`.
class HostSide : public Refusing {
 public:
  explicit HostSide(int32_t other) : other_(other) {}
  void allreduce(const void* send, void* recv, size_t count, ElemType type, ReduceOp op) override {
    ASSERT_EQ(count, 1u);
    ASSERT_EQ(type, ElemType::I32);
    ASSERT_EQ(op, ReduceOp::Max);
    *static_cast<int32_t*>(recv) = std::max(*static_cast<const int32_t*>(send), other_);
    ++calls;
  }
  int calls = 0;

 private:
  int32_t other_;
};

class Device : public Refusing {
 public:
  explicit Device(HostSide& host) : host_(host) {}
  bool device_buffers() const override { return true; }
  Communicator& host_side() override { return host_; }

 private:
  HostSide& host_;
};

// Calls skip_unless_every_rank(failure) in a case on communicator `c`.
void vote(comm::Communicator& c, const std::string& failure) {
  WorkloadInfo info;
  info.name = "t";
  State s(info, {}, 1, {});
  s.set_comm(&c);
  s.skip_unless_every_rank(failure);
}

TEST(SkipUnlessEveryRank, VotesOnTheHostSideAndStopsEveryRankWhenOneFailed) {
  HostSide fine(0), failed(1);
  Device on_fine(fine), on_failed(failed);
  EXPECT_NO_THROW(vote(on_fine, ""));
  EXPECT_EQ(fine.calls, 1);
  EXPECT_THROW(vote(on_failed, ""), StoppedByPeer);  // the other rank failed
  try {
    vote(on_fine, "backend cuda: out of memory");
    ADD_FAILURE() << "no skip";
  } catch (const SkipCase& e) {
    EXPECT_STREQ(e.what(), "backend cuda: out of memory");
  }
}

}  // namespace
}  // namespace mlsb
