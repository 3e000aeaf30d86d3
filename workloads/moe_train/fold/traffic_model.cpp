#include "workloads/moe_train/fold/traffic_model.hpp"

#include <algorithm>

namespace mlsb::moe_train::fold {
namespace {

// The share of `members`' peers of `me` that sit on another node, and those on each side.
struct Sides {
  size_t intra = 0, inter = 0;
  double off_node_share() const { return intra + inter > 0 ? static_cast<double>(inter) / (intra + inter) : 0; }
};
Sides sides(const std::vector<int>& members, int me, const Cluster& cluster) {
  Sides s;
  for (int r : members)
    if (r != me) ++(cluster.node(r) == cluster.node(me) ? s.intra : s.inter);
  return s;
}

}  // namespace

double PredictedTraffic::total_seconds() const {
  double s = 0;
  for (double x : seconds) s += x;
  return s;
}

PredictedTraffic predict_traffic(const BlockConfig& c, const Mapping& m, const Groups& g, const Cluster& cluster,
                                 int world_rank, double element_bytes) {
  const double b = element_bytes, H = static_cast<double>(c.moe.hidden), E = static_cast<double>(c.moe.experts);
  const double k = static_cast<double>(c.moe.topk), F = static_cast<double>(c.moe.ffn);
  const double T = static_cast<double>(c.tokens()) / m.world;
  const double tp = m.tp, cp = m.cp, ep = m.ep, etp = m.etp, edp = m.edp, dc = static_cast<double>(m.dp) * m.cp;
  const double replicated = (2 * H + H * E) * b;  // norms and router
  struct Part {
    Group g;
    double bytes;
    int calls;  // collectives per step (each pays its latency once per peer)
  };
  const bool gather = c.dispatcher == Dispatcher::AllGather;
  const double n = etp * ep;  // the ETP x EP group
  const Part parts[] = {
      {Group::Tp, 4 * (tp - 1) * T * H * b + 2 * (tp - 1) / tp * replicated, 4 + 3},
      {Group::Cp, 4 * (cp - 1) * T * H * b, 2},
      {Group::Ep, gather ? 0 : 4 * (ep - 1) / ep * T * k * H * b, 4},
      {Group::TpEp, gather ? 4 * (n - 1) * T * H * b + (n - 1) * T * k * (8 + 4 + 4) : (n - 1) * E * 8, gather ? 7 : 1},
      {Group::Etp, gather ? 0 : 4 * (etp - 1) * T * k * H * b, 4},
      {Group::Edp, 2 * (edp - 1) / edp * (E / ep) * 3 * H * F / etp * b, 2},
      {Group::DpCp, 2 * (dc - 1) / dc * (4 * H * H / tp * b + replicated), 2 + 3},
  };
  PredictedTraffic out;
  for (const Part& p : parts) {
    const Sides s = sides(g.containing(p.g, world_rank), world_rank, cluster);
    const Group into = p.g == Group::TpEp ? Group::Ep : p.g;
    out.bytes[static_cast<size_t>(into)] += p.bytes;
    out.cross_node[static_cast<size_t>(into)] += p.bytes * s.off_node_share();
    out.cross_node_bytes += p.bytes * s.off_node_share();
    const double per_call = p.bytes / p.calls, share = s.off_node_share();
    double t = 0;
    if (s.intra + s.inter > 0)
      t = std::max(cluster.intra.seconds(per_call * (1 - share), s.intra), cluster.inter.seconds(per_call * share, s.inter));
    out.seconds[static_cast<size_t>(into)] += p.calls * t;
  }
  return out;
}

}  // namespace mlsb::moe_train::fold
