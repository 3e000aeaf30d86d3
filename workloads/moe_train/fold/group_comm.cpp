#include "workloads/moe_train/fold/group_comm.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <string>

#include "util/clock.hpp"

namespace mlsb::moe_train::fold {
namespace {

std::vector<size_t> float_bytes(std::span<const int64_t> counts) {
  std::vector<size_t> b(counts.size());
  for (size_t i = 0; i < counts.size(); ++i) b[i] = static_cast<size_t>(counts[i]) * sizeof(float);
  return b;
}

// A link model's error renamed to the cluster's axis ("link_gbps: ..." -> "inter_gbps: ...").
comm::LinkModel named_link(double gbps, double latency_us, const std::string& side) {
  try {
    return comm::make_link_model(gbps, latency_us);
  } catch (const std::invalid_argument& e) {
    std::string what = e.what();
    for (const char* from : {"link_gbps", "link_latency_us"}) {
      const std::string to = side + (std::string(from) == "link_gbps" ? "_gbps" : "_latency_us");
      for (size_t at = what.find(from); at != std::string::npos; at = what.find(from, at + to.size()))
        what.replace(at, std::string(from).size(), to);
    }
    throw std::invalid_argument(what);
  }
}

}  // namespace

double Cluster::seconds(std::span<const int> members, int me, std::span<const double> sent,
                        std::span<const double> received) const {
  if (!modelled()) return 0;
  double out[2] = {0, 0}, in[2] = {0, 0};
  size_t peers[2] = {0, 0};
  const int home = node(members[static_cast<size_t>(me)]);
  for (size_t p = 0; p < members.size(); ++p) {
    if (static_cast<int>(p) == me) continue;
    const int side = node(members[p]) == home ? 0 : 1;
    out[side] += sent[p], in[side] += received[p], ++peers[side];
  }
  return std::max(intra.seconds(std::max(out[0], in[0]), peers[0]), inter.seconds(std::max(out[1], in[1]), peers[1]));
}

Cluster make_cluster(int world, int ranks_per_node, double intra_gbps, double intra_latency_us, double inter_gbps,
                     double inter_latency_us) {
  if (ranks_per_node < 0 || (ranks_per_node > 0 && world % ranks_per_node != 0))
    throw std::invalid_argument("ranks_per_node: " + std::to_string(ranks_per_node) + " does not divide the " +
                                std::to_string(world) + " ranks (0 = one node)");
  Cluster c;
  c.ranks_per_node = ranks_per_node;
  c.intra = named_link(intra_gbps, intra_latency_us, "intra");
  c.inter = named_link(inter_gbps, inter_latency_us, "inter");
  if (c.inter.active() && (ranks_per_node == 0 || ranks_per_node >= world))
    throw std::invalid_argument("inter_gbps: a link between nodes needs two nodes or more, but ranks_per_node = " +
                                std::to_string(ranks_per_node) + " puts the " + std::to_string(world) +
                                " ranks on one (set ranks_per_node below the rank count)");
  return c;
}

GroupComm::GroupComm(std::unique_ptr<comm::Communicator> comm, std::vector<int> members, int world_rank,
                     const Cluster& cluster, Traffic& traffic)
    : comm_(std::move(comm)), members_(std::move(members)), world_rank_(world_rank), cluster_(cluster),
      traffic_(traffic) {
  me_ = static_cast<int>(std::find(members_.begin(), members_.end(), world_rank) - members_.begin());
  if (me_ == size() || comm_->size() != size() || comm_->rank() != me_)
    throw comm::CommError("rank groups: world rank " + std::to_string(world_rank) + " is not rank " +
                          std::to_string(me_) + " of its group's communicator");
}

template <typename F>
void GroupComm::run(F&& call, std::span<const double> sent, std::span<const double> received) {
  const auto t0 = Clock::now();
  if (!host_copy()) call();
  const int home = cluster_.node(world_rank_);
  for (int p = 0; p < size(); ++p) {
    if (p == me_) continue;
    traffic_.bytes += sent[static_cast<size_t>(p)];
    if (cluster_.node(members_[static_cast<size_t>(p)]) != home) traffic_.cross_node_bytes += sent[static_cast<size_t>(p)];
  }
  comm::wait_for_link(*comm_, t0 + as_duration(cluster_.seconds(members_, me_, sent, received)));
  traffic_.seconds += seconds_since(t0);
}

void GroupComm::allgatherv(const float* send, float* recv, std::span<const int64_t> counts) {
  recv_bytes_ = float_bytes(counts);
  const double own = static_cast<double>(recv_bytes_[static_cast<size_t>(me_)]);
  std::vector<double> sent(counts.size(), own), received(recv_bytes_.begin(), recv_bytes_.end());
  run([&] { comm_->allgatherv(send, recv_bytes_[static_cast<size_t>(me_)], recv, recv_bytes_); }, sent, received);
  if (host_copy() && counts[0] > 0 && recv != send) std::copy(send, send + counts[0], recv);
}

void GroupComm::reduce_scatter_v(const float* send, float* recv, std::span<const int64_t> counts) {
  const int64_t mine = counts[static_cast<size_t>(me_)];
  send_bytes_ = float_bytes(counts);
  recv_bytes_.assign(counts.size(), static_cast<size_t>(mine) * sizeof(float));
  std::vector<double> sent(send_bytes_.begin(), send_bytes_.end()), received(recv_bytes_.begin(), recv_bytes_.end());
  std::vector<size_t> elements(counts.begin(), counts.end());
  run([&] { comm_->reduce_scatter_v(send, recv, elements, comm::ElemType::F32, comm::ReduceOp::Sum); }, sent, received);
  if (host_copy() && mine > 0 && recv != send) std::copy(send, send + mine, recv);
}

void GroupComm::alltoallv(const float* send, std::span<const int64_t> send_counts, float* recv,
                          std::span<const int64_t> recv_counts) {
  send_bytes_ = float_bytes(send_counts), recv_bytes_ = float_bytes(recv_counts);
  std::vector<double> sent(send_bytes_.begin(), send_bytes_.end()), received(recv_bytes_.begin(), recv_bytes_.end());
  run([&] { comm_->alltoallv(send, send_bytes_, recv, recv_bytes_); }, sent, received);
  if (host_copy() && send_counts[0] > 0 && recv != send) std::copy(send, send + send_counts[0], recv);
}

void GroupComm::allreduce(float* data, size_t count) {
  const double share = 2.0 * static_cast<double>(count * sizeof(float)) / size();
  std::vector<double> both(static_cast<size_t>(size()), share);
  run([&] { comm_->allreduce(data, data, count, comm::ElemType::F32, comm::ReduceOp::Sum); }, both, both);
}

std::vector<int64_t> GroupComm::allgather_i64(std::span<const int64_t> values) {
  std::vector<int64_t> all(values.size() * static_cast<size_t>(size()));
  const double own = static_cast<double>(values.size() * sizeof(int64_t));
  std::vector<double> both(static_cast<size_t>(size()), own);
  comm::Communicator& host = comm_->host_side();  // host values on every kind
  if (size() == 1) std::copy(values.begin(), values.end(), all.begin());
  run([&] { if (size() > 1) host.allgather(values.data(), all.data(), values.size(), comm::ElemType::I64); }, both, both);
  return all;
}

std::unique_ptr<RankComms> make_rank_comms(comm::Communicator& world, const Groups& groups, const Cluster& cluster) {
  auto rc = std::make_unique<RankComms>();
  rc->cluster = cluster;
  const int me = world.rank();
  for (int k = 0; k < kGroupKinds; ++k) {
    const Group g = static_cast<Group>(k);
    if (g == Group::Pp) continue;
    const auto& all = groups.of[static_cast<size_t>(k)];
    const auto& members = groups.containing(g, me);
    const int color = static_cast<int>(&members - all.data()), key = groups.index_of(g, me);
    // The counts' all-gather over ETP x EP is the EP dispatcher's; DP's reductions run over DP x CP.
    const Group into = g == Group::TpEp ? Group::Ep : g == Group::Dp ? Group::DpCp : g;
    rc->of[static_cast<size_t>(k)] = std::make_unique<GroupComm>(comm::split(world, color, key), members, me,
                                                                 rc->cluster, rc->traffic_of(into));
  }
  return rc;
}

}  // namespace mlsb::moe_train::fold
