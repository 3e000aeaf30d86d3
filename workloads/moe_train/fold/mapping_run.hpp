#pragma once
// One mapping of the folded block ready to step on the run's ranks: its groups, their communicators (split from
// the world), the block with this rank's shards of the weights (on the CPU, or on this rank's GPU), and this
// rank's rows of the batch.
#include <memory>
#include <vector>

#include "backends/comm/communicator.hpp"
#include "workloads/moe_train/fold/block.hpp"
#include "workloads/moe_train/fold/gpu_block.hpp"

namespace mlsb::moe_train::fold {

class MappingRun {
 public:
  /// Collective over `world` (the groups' communicators are split from it). `gpu`: the block runs on this rank's
  /// GPU (gpu_block.hpp; `world` nccl or mpi), else on the CPU with `threads`. Throws std::invalid_argument
  /// (validate), comm::CommError, and std::runtime_error when `gpu` and no GPU is usable.
  MappingRun(comm::Communicator& world, const BlockConfig& c, const Mapping& m, const Cluster& cluster,
             const BlockWeights& w, const BlockData& data, int threads, bool gpu = false);
  MappingRun(const MappingRun&) = delete;  // the block holds references to the groups and communicators
  MappingRun& operator=(const MappingRun&) = delete;

  /// One step on every rank together: gradients zeroed, times and traffic cleared, forward, backward and the
  /// gradient reductions. Returns this rank's seconds.
  double step();

  const Mapping& mapping() const { return mapping_; }
  const Groups& groups() const { return groups_; }
  RankComms& comms() { return *comms_; }
  /// The block's part on this rank, the last step's dispatch plan, times, and reduced gradient shards.
  const BlockShard& shard() const;
  const DispatchPlan& plan() const;
  BlockTimes& times();
  BlockWeights grads();
  /// The CPU block (nullptr on a GPU).
  FoldedBlock* cpu_block() { return block_.get(); }
  /// The GPU block (nullptr on the CPU).
  GpuFoldedBlock* gpu_block() { return gpu_.get(); }
  /// This rank's output rows of the last step and their input gradients.
  std::vector<float> y();
  std::vector<float> dx();

 private:
  Mapping mapping_;
  Groups groups_;
  std::unique_ptr<RankComms> comms_;
  std::unique_ptr<FoldedBlock> block_;
  std::unique_ptr<GpuFoldedBlock> gpu_;
  std::vector<float> x_, dy_, y_, dx_;  // this rank's rows (y_ and dx_ the CPU block's outputs)
};

}  // namespace mlsb::moe_train::fold
