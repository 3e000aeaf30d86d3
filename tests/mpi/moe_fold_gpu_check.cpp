// moe_fold_gpu_check: the folded block on each rank's GPU (workloads/moe_train/fold/gpu_block.hpp) against the
// one-rank CPU block, for every legal mapping of the world with the all-to-all dispatcher: y, dx and every gradient
// shard within kBlockRelTolerance, the assignments each rank drops under a capacity factor equal to the reference's
// for its tokens, an empty split (experts and EP ranks without rows) working, and the bytes counted per group equal
// to the CPU block's on the same mapping. Prints one line per mapping (rank 0); exit status 0 when every mapping
// matched on every rank, 77 (skip) without a GPU.
//   moe_fold_gpu_check        the tensors travel through pinned host memory over mpi (ranks may share a GPU)
//   moe_fold_gpu_check nccl   between device buffers over nccl group communicators (one GPU per rank: 77 with fewer
//                             GPUs than ranks on this node, or a build without NCCL)
#include <cstdio>
#include <memory>
#include <string>

#include "backends/comm/communicator.hpp"
#include "support/gpu_world.hpp"
#include "workloads/moe_train/fold/block_check.hpp"
#include "support/fold_block.hpp"
#include "workloads/moe_train/fold/mapping_run.hpp"

using namespace mlsb::moe_train;
using namespace mlsb::moe_train::fold;

namespace {

// One mapping on every rank's GPU: 0 when it matched everywhere.
int check_gpu_mapping(mlsb::comm::Communicator& world, const BlockConfig& c, const Mapping& m, const char* what) {
  mlsb::comm::Communicator& host = world.host_side();
  const BlockWeights w = init_block(c, 11);
  const BlockData data = block_data(c, 11);
  MappingRun gpu(world, c, m, Cluster{}, w, data, 1, true);
  gpu.step();
  const BlockCheck check =
      check_block(c, m, gpu.groups(), w, data, gpu.shard(), gpu.grads(), gpu.plan(), gpu.y(), gpu.dx());
  // The same traffic as the CPU block's: the GPU block runs the same collectives on the same layout.
  MappingRun cpu(host, c, m, Cluster{}, w, data, 1);
  cpu.step();
  std::string bytes_note;
  for (int k = 0; k < kGroupKinds; ++k)
    if (gpu.comms().traffic[k].bytes != cpu.comms().traffic[k].bytes)
      bytes_note += " " + std::string(to_string(static_cast<Group>(k))) + " " +
                    std::to_string(gpu.comms().traffic[k].bytes) + " vs cpu " +
                    std::to_string(cpu.comms().traffic[k].bytes);
  const double worst = host.max_over_ranks(check.worst_rel_err);
  const double bad = host.max_over_ranks(check.drops_differ || !bytes_note.empty() ? 1 : 0);
  const bool ok = worst <= kBlockRelTolerance && bad == 0;
  if (host.rank() == 0)
    std::printf("%s %s %s on %s: max rel L2 %.2e (%s on rank 0), drops %s, bytes %s%s\n", ok ? "ok" : "MISMATCH", what,
                m.label().c_str(), world.name().c_str(), worst, check.worst_what.c_str(),
                check.drops_differ ? "DIFFER" : "match", bytes_note.empty() ? "as the cpu block's" : "DIFFER:",
                bytes_note.c_str());
  std::fflush(stdout);
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  auto mpi = mlsb::comm::make_communicator("mpi");
  std::unique_ptr<mlsb::comm::Communicator> nccl;
  if (const int skip = mlsb::test::gpu_world(*mpi, argc, argv, nccl)) return skip;
  mlsb::comm::Communicator& world = nccl ? *nccl : *mpi;
  const int P = mpi->size();
  const BlockConfig c = mlsb::test::check_block_config(P);
  int bad = 0;
  const auto all = legal_mappings(P, c.moe.experts, c.moe.ffn, c.heads, c.seq, true);
  for (const Mapping& m : all)
    if (c.batch % m.dp == 0) bad += check_gpu_mapping(world, c, m, "dropless");
  BlockConfig capped = c;
  capped.moe.capacity_factor = 0.5;
  for (const Mapping& m : {all.front(), all.back()}) bad += check_gpu_mapping(world, capped, m, "capacity 0.5");
  BlockConfig sparse = c;
  sparse.moe.experts = 4 * P, sparse.seq = 4, sparse.batch = 1, sparse.moe.topk = 1;
  for (const Mapping& m : legal_mappings(P, sparse.moe.experts, sparse.moe.ffn, sparse.heads, sparse.seq, false))
    if (sparse.batch % m.dp == 0 && m.ep == P) bad += check_gpu_mapping(world, sparse, m, "empty splits");
  if (mpi->rank() == 0) std::printf("%zu mappings, %d mismatched\n", all.size(), bad);
  std::fflush(stdout);
  return bad ? 1 : 0;
}
