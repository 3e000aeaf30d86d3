// moe_fold_check: the folded block (workloads/moe_train/fold/) on every rank of mpirun against the one-rank block,
// for every legal mapping of the world (tp, cp, etp, ep over its divisors): y, dx and every gradient shard within
// kBlockRelTolerance; with a capacity factor, the assignments each rank drops are the ones the reference drops for
// that rank's tokens; the dispatcher conserves tokens (sent rows are the transpose of received rows, the round trip
// returns etp * x); the bytes counted per group are the traffic model's; and a world with a rank whose experts get no tokens works. Prints one line per mapping (rank
// 0); exit status 0 only when every mapping matched on every rank.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "backends/comm/communicator.hpp"
#include "support/fold_block.hpp"
#include "workloads/moe_train/fold/block.hpp"
#include "workloads/moe_train/fold/block_check.hpp"
#include "workloads/moe_train/fold/mapping_run.hpp"
#include "workloads/moe_train/fold/traffic_model.hpp"

using namespace mlsb::moe_train;
using namespace mlsb::moe_train::fold;

namespace {

// One mapping on every rank: 0 when it matched everywhere.
int check_mapping(mlsb::comm::Communicator& world, const BlockConfig& c, const Mapping& m, const char* what) {
  const BlockWeights w = init_block(c, 11);
  const BlockData data = block_data(c, 11);
  MappingRun run(world, c, m, Cluster{}, w, data, 1);
  run.step();
  const Groups& g = run.groups();
  FoldedBlock& block = *run.cpu_block();
  RankComms* comms = &run.comms();
  const int64_t h = c.moe.hidden;
  // Counted bytes against the traffic model: exact for the groups routing cannot change (and for ETP when
  // dropless, summed over ranks: every assignment is gathered once per ETP group), within 15% for EP's
  // all-to-alls summed over ranks (the model assumes balanced, dropless routing); exact for the all-gather
  // dispatcher.
  const PredictedTraffic predicted = predict_traffic(c, m, g, Cluster{}, world.rank(), 4);
  bool bytes_ok = true;
  std::string bytes_note;
  for (Group kind : {Group::Tp, Group::Cp, Group::Edp, Group::DpCp, Group::Ep, Group::Etp}) {
    double counted = comms->traffic_of(kind).bytes, want = predicted.bytes[static_cast<size_t>(kind)];
    if (kind == Group::Ep || kind == Group::Etp) {
      world.allreduce(&counted, &counted, 1, mlsb::comm::ElemType::F64, mlsb::comm::ReduceOp::Sum);
      world.allreduce(&want, &want, 1, mlsb::comm::ElemType::F64, mlsb::comm::ReduceOp::Sum);
    }
    // With capacity dropping fewer rows travel than the dropless model says: EP and ETP are not compared then.
    // The all-gather dispatcher moves every token whatever the routing: exact.
    const bool routed = (kind == Group::Ep || kind == Group::Etp) && c.dispatcher == Dispatcher::AllToAll;
    const double tol = routed && c.moe.capacity_factor > 0 ? 1.0 : routed && kind == Group::Ep ? 0.15 : 1e-9;
    if (std::abs(counted - want) > tol * std::max(want, 1.0)) {
      bytes_ok = false;
      bytes_note += " " + std::string(to_string(kind)) + " counted " + std::to_string(counted) + " predicted " +
                    std::to_string(want);
    }
  }
  const BlockCheck check = check_block(c, m, g, w, data, block, block.grads(), block.plan(), run.y(), run.dx());
  // Tokens conserved: what this rank sends each EP peer is what that peer receives from it.
  auto& ep = (*comms)[Group::Ep];
  const auto sent = ep.allgather_i64(block.layout().send_rows), received = ep.allgather_i64(block.layout().recv_rows);
  const int n = ep.size();
  bool transposed = true;
  double trip = 0;
  if (c.dispatcher == Dispatcher::AllToAll) {
    for (int a = 0; a < n; ++a)
      for (int b = 0; b < n; ++b) transposed &= sent[a * n + b] == received[b * n + a];
    // The round trip of the rows returns them times etp.
    std::vector<float> rows(block.plan().rows() * h), at, back;
    for (size_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<float>(std::sin(0.37 * i + world.rank()));
    block.dispatch(rows, at);
    block.combine(at, back);
    std::vector<float> want(rows);
    for (auto& v : want) v *= static_cast<float>(m.etp);
    trip = rel_l2(back, want);
  }
  const double worst = world.max_over_ranks(check.worst_rel_err);
  const double bad = world.max_over_ranks((check.drops_differ || !transposed || !(trip < 1e-6) || !bytes_ok) ? 1 : 0);
  const int64_t dropped = block.plan().dropped;
  double all_dropped = static_cast<double>(dropped);
  world.allreduce(&all_dropped, &all_dropped, 1, mlsb::comm::ElemType::F64, mlsb::comm::ReduceOp::Sum);
  const bool ok = worst <= kBlockRelTolerance && bad == 0;
  if (world.rank() == 0)
    std::printf("%s %s%s %s: max rel L2 %.2e (%s on rank 0), dropped %g, drops %s, counts %s, round trip %.1e, "
                "bytes %s%s\n",
                ok ? "ok" : "MISMATCH", what, c.dispatcher == Dispatcher::AllGather ? " (allgather)" : "", m.label().c_str(), worst, check.worst_what.c_str(), all_dropped,
                check.drops_differ ? "DIFFER" : "match", transposed ? "transposed" : "NOT TRANSPOSED", trip,
                bytes_ok ? "as predicted" : "DIFFER:", bytes_note.c_str());
  return ok ? 0 : 1;
}

}  // namespace

int main() {
  auto world = mlsb::comm::make_communicator("mpi");
  const int P = world->size();
  const BlockConfig c = mlsb::test::check_block_config(P);
  int bad = 0;
  const auto all = legal_mappings(P, c.moe.experts, c.moe.ffn, c.heads, c.seq, true);
  for (const Mapping& m : all)
    if (c.batch % m.dp == 0) bad += check_mapping(*world, c, m, "dropless");
  // The all-gather dispatcher on every mapping too.
  BlockConfig gathered = c;
  gathered.dispatcher = Dispatcher::AllGather;
  for (const Mapping& m : all)
    if (c.batch % m.dp == 0) bad += check_mapping(*world, gathered, m, "dropless");
  // Capacity decided per rank from its own tokens (sub-sequence dropping), with both drop policies.
  BlockConfig capped = c;
  capped.moe.capacity_factor = 0.5;
  for (Dispatcher dispatcher : {Dispatcher::AllToAll, Dispatcher::AllGather})
    for (DropPolicy d : {DropPolicy::Probs, DropPolicy::Position}) {
      capped.moe.drop = d, capped.dispatcher = dispatcher;
      for (const Mapping& m : {all.front(), all.back(), all[all.size() / 2]})
        bad += check_mapping(*world, capped, m, d == DropPolicy::Probs ? "capacity 0.5 probs" : "capacity 0.5 position");
    }
  // Empty splits: one token per sequence-parallel rank and many experts leave most experts (and some EP ranks)
  // without rows.
  BlockConfig sparse = c;
  sparse.moe.experts = 4 * P, sparse.seq = 4, sparse.batch = P / 4 > 0 ? P / 4 : 1, sparse.moe.topk = 1;
  for (const Mapping& m : legal_mappings(P, sparse.moe.experts, sparse.moe.ffn, sparse.heads, sparse.seq, false))
    if (sparse.batch % m.dp == 0 && m.ep == P) {
      bad += check_mapping(*world, sparse, m, "empty splits");
      sparse.dispatcher = Dispatcher::AllGather;
      bad += check_mapping(*world, sparse, m, "empty splits");
      sparse.dispatcher = Dispatcher::AllToAll;
    }
  if (world->rank() == 0) std::printf("%zu mappings, %d mismatched\n", all.size(), bad);
  std::fflush(stdout);
  return bad ? 1 : 0;
}
