#pragma once
// One mapping of the folded block ready to step on the run's ranks: its groups, their communicators (split from
// the world), the block with this rank's shards of the weights, and this rank's rows of the batch.
#include <memory>
#include <vector>

#include "backends/comm/communicator.hpp"
#include "workloads/moe_train/fold/block.hpp"

namespace mlsb::moe_train::fold {

class MappingRun {
 public:
  /// Collective over `world` (the groups' communicators are split from it). Throws std::invalid_argument
  /// (validate) or comm::CommError.
  MappingRun(comm::Communicator& world, const BlockConfig& c, const Mapping& m, const Cluster& cluster,
             const BlockWeights& w, const BlockData& data, int threads);
  MappingRun(const MappingRun&) = delete;  // the block holds references to the groups and communicators
  MappingRun& operator=(const MappingRun&) = delete;

  /// One step on every rank together: gradients zeroed, times and traffic cleared, forward, backward and the
  /// gradient reductions. Returns this rank's seconds.
  double step();

  const Mapping& mapping() const { return mapping_; }
  const Groups& groups() const { return groups_; }
  FoldedBlock& block() { return *block_; }
  RankComms& comms() { return *comms_; }
  const std::vector<float>& y() const { return y_; }    ///< this rank's output rows of the last step
  const std::vector<float>& dx() const { return dx_; }  ///< and their input gradients

 private:
  Mapping mapping_;
  Groups groups_;
  std::unique_ptr<RankComms> comms_;
  std::unique_ptr<FoldedBlock> block_;
  std::vector<float> x_, dy_, y_, dx_;
};

}  // namespace mlsb::moe_train::fold
