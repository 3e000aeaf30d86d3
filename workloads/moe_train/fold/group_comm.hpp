#pragma once
// The communicators of one rank's folded groups, each collective counted (bytes a rank sends, those that
// leave its node) and, on a modelled cluster, waited out on the modelled links: inside a node and between
// nodes, each the alpha-beta LinkModel (backends/comm/link_model.hpp) per rank.
//
// Bytes a rank sends, per collective, as if every rank sent straight to each peer (what crosses the wire at
// least once; ring and tree algorithms move the same totals for equal blocks):
//   all-gather(v)      its own block to each of the n-1 peers                 (n-1) * own
//   reduce-scatter(v)  each peer's block of its input                         total - own block
//   all-to-all(v)      its block for each peer                                sum of blocks to peers
//   all-reduce         a reduce-scatter then an all-gather of its 1/n share   2 (n-1)/n * size
// A collective on the modelled cluster completes no earlier than its start plus the larger of its intra-node
// and its inter-node time, each bytes / bandwidth + peers * latency over the larger of the bytes sent and
// received on that side.
#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "backends/comm/communicator.hpp"
#include "backends/comm/link_model.hpp"
#include "workloads/moe_train/fold/mapping.hpp"

namespace mlsb::moe_train::fold {

/// The modelled cluster: ranks_per_node consecutive world ranks share a node (0: one node).
struct Cluster {
  int ranks_per_node = 0;
  comm::LinkModel intra, inter;  ///< per rank; inactive: the real transport alone
  int node(int world_rank) const { return ranks_per_node > 0 ? world_rank / ranks_per_node : 0; }
  bool modelled() const { return intra.active() || inter.active(); }
  /// Seconds of a collective that sends `sent[p]` and receives `received[p]` bytes from the group's world
  /// ranks `members[p]`, seen from `me` (its own entry ignored).
  double seconds(std::span<const int> members, int me, std::span<const double> sent,
                 std::span<const double> received) const;
};

/// Throws std::invalid_argument naming the axis: ranks_per_node not dividing the world ("ranks_per_node: ..."),
/// a bad bandwidth or latency (comm::make_link_model's rules, named intra_gbps / inter_gbps), or a link between
/// nodes on a single node ("inter_gbps: ...": it would be ignored).
Cluster make_cluster(int world, int ranks_per_node, double intra_gbps, double intra_latency_us, double inter_gbps,
                     double inter_latency_us);

/// What one group kind's collectives did in a step (summed).
struct Traffic {
  double seconds = 0;           ///< inside its collectives (the modelled wait included)
  double bytes = 0;             ///< sent by this rank
  double cross_node_bytes = 0;  ///< of those, to ranks on other nodes
  void clear() { *this = {}; }
};

/// One group's communicator (ranks numbered as in the group) with its traffic counted into `traffic`.
class GroupComm {
 public:
  GroupComm(std::unique_ptr<comm::Communicator> comm, std::vector<int> members, int world_rank,
            const Cluster& cluster, Traffic& traffic);
  int size() const { return static_cast<int>(members_.size()); }
  int rank() const { return me_; }  ///< this rank's index in the group
  const std::vector<int>& members() const { return members_; }

  /// Whether the buffers of the collectives below are device memory (an nccl group); allgather_i64 takes host
  /// values either way.
  bool device_buffers() const { return comm_->device_buffers(); }

  /// Rank p contributes counts[p] floats; recv holds their concatenation in group order.
  void allgatherv(const float* send, float* recv, std::span<const int64_t> counts);
  /// send holds counts[0] + counts[1] + ... floats (block p for rank p); recv (counts[rank()] floats) gets the
  /// element-wise sum of every rank's block for it (Communicator::reduce_scatter_v: host buffers summed in group
  /// order, deterministic).
  void reduce_scatter_v(const float* send, float* recv, std::span<const int64_t> counts);
  /// send_counts[p] floats go to rank p, recv_counts[p] arrive from it (prefix-sum offsets).
  void alltoallv(const float* send, std::span<const int64_t> send_counts, float* recv,
                 std::span<const int64_t> recv_counts);
  /// In place element-wise sum over the group.
  void allreduce(float* data, size_t count);
  /// Every rank's `count` int64 values in group order (the dispatcher's token counts).
  std::vector<int64_t> allgather_i64(std::span<const int64_t> values);

 private:
  // A group of one rank on host buffers copies instead of calling the communicator (device buffers always call
  // it: nccl copies on the device).
  bool host_copy() const { return size() == 1 && !comm_->device_buffers(); }
  // Runs `call`, counts sent bytes, waits out the modelled time.
  template <typename F>
  void run(F&& call, std::span<const double> sent, std::span<const double> received);

  std::unique_ptr<comm::Communicator> comm_;
  std::vector<int> members_;
  int me_ = 0, world_rank_ = 0;
  const Cluster& cluster_;
  Traffic& traffic_;
  std::vector<size_t> send_bytes_, recv_bytes_;
};

/// The communicators of every group kind of one rank (Group::Pp left out: one block is one stage), split from
/// `world`, and their traffic (TpEp's counted as Ep's, Dp's as DpCp's). Collective over `world`: every rank builds them together.
struct RankComms {
  Cluster cluster;  ///< the model every GroupComm here refers to
  std::array<std::unique_ptr<GroupComm>, kGroupKinds> of;
  std::array<Traffic, kGroupKinds> traffic;
  GroupComm& operator[](Group g) { return *of[static_cast<size_t>(g)]; }
  Traffic& traffic_of(Group g) { return traffic[static_cast<size_t>(g)]; }
  void clear_traffic() {
    for (auto& t : traffic) t.clear();
  }
};
/// Throws comm::CommError when a split fails.
std::unique_ptr<RankComms> make_rank_comms(comm::Communicator& world, const Groups& groups, const Cluster& cluster);

}  // namespace mlsb::moe_train::fold
