// moe_ep_gpu_check: the CUDA MoE layer with expert parallelism against its oracle, the CPU MoeLayer<float>
// sharded the same way over the same ranks and given the GPU's bf16-rounded weights, x and dy (the
// single-GPU oracle test's method, tests/gpu/moe_train_gpu_test.cpp): for top-k softmax with capacity drops
// and the sigmoid router with groups and shared experts, under overlap=none and overlap=chunked, the loads,
// rows per expert and drops are equal and the output, dx and every gradient within relative L2 2e-2.
// Prints one line per rank and configuration; exit status 0 when all matched, 77 (skip) without a GPU.
//   moe_ep_gpu_check        the rows travel through pinned host memory over the mpi communicator (ranks may
//                           share a GPU)
//   moe_ep_gpu_check nccl   they travel between device buffers over an nccl communicator (one GPU per rank:
//                           77 with fewer GPUs than ranks on this node, or a build without NCCL); the CPU
//                           oracle runs over its host side
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "support/random_values.hpp"
#include "backends/comm/communicator.hpp"
#include "support/close.hpp"
#include "support/gpu_world.hpp"
#include "workloads/moe_train/gpu_layer.hpp"
#include "workloads/moe_train/moe_layer.hpp"

using namespace mlsb::moe_train;
using mlsb::test::rel_l2;
using mlsb::test::round_bf16;
using mlsb::test::rounded;

namespace {

constexpr double kTol = 2e-2;  // relative L2 error of bf16 outputs and gradients

using mlsb::test::normal_floats;

// "" when the GPU layer (its rows on `comm`) matches the CPU oracle (on comm's host side) on this rank, else
// the first difference.
std::string check(const MoeConfig& c, mlsb::comm::Communicator& comm, const EpOptions& ep) {
  const int64_t T = 128, h = c.hidden;
  const uint64_t seed = 11;
  MoeLayer<float> cpu(c, &comm.host_side(), 1);
  cpu.init(seed);
  auto& p = cpu.params();
  for (auto* v : {&p.router, &p.experts.w13, &p.experts.w2, &p.shared.w13, &p.shared.w2})
    for (auto& x : *v) x = round_bf16(x);
  const auto x = normal_floats(T * h, 5 + comm.rank()), dy = normal_floats(T * h, 50 + comm.rank());
  const auto xr = rounded(x), dyr = rounded(dy);
  AdamWConfig opt;
  opt.lr = 0;
  auto gpu = make_gpu_layer(c, T, seed, opt, &comm, ep);
  gpu->set_input(x, dy);
  std::vector<float> y(T * h), dx(T * h);
  cpu.forward(xr.data(), T, y.data());
  std::string diff;
  auto expect = [&](bool ok, const std::string& what) {
    if (!ok && diff.empty()) diff = what;
  };
  const double out = rel_l2(gpu->forward_output(), y);
  expect(out < kTol, "forward output: relative L2 " + std::to_string(out));
  const GpuStepResult r = gpu->step();
  cpu.zero_grad();
  cpu.backward(dyr.data(), dx.data());
  expect(r.load == cpu.routing().load, "load per expert");
  expect(r.tokens_per_expert == cpu.plan().tokens_per_expert(), "rows per expert");
  expect(r.dropped == cpu.plan().dropped, "dropped assignments");
  const auto& g = cpu.grads();
  const std::pair<const char*, const std::vector<float>*> grads[] = {{"x", &dx},
                                                                     {"router", &g.router},
                                                                     {"w13", &g.experts.w13},
                                                                     {"w2", &g.experts.w2},
                                                                     {"shared_w13", &g.shared.w13},
                                                                     {"shared_w2", &g.shared.w2}};
  for (const auto& [name, want] : grads) {
    const double e = rel_l2(gpu->gradient(name), *want);
    expect(e < kTol, std::string("gradient ") + name + ": relative L2 " + std::to_string(e));
  }
  return diff;
}

}  // namespace

int main(int argc, char** argv) {
  auto mpi = mlsb::comm::make_communicator("mpi");
  std::unique_ptr<mlsb::comm::Communicator> nccl;
  if (const int skip = mlsb::test::gpu_world(*mpi, argc, argv, nccl)) return skip;
  mlsb::comm::Communicator* comm = nccl ? nccl.get() : mpi.get();
  MoeConfig capacity;
  capacity.hidden = 64, capacity.ffn = 96, capacity.experts = 8, capacity.topk = 2;
  capacity.router = RouterKind::TopkSoftmax, capacity.capacity_factor = 1.0;
  capacity.aux_coef = 1e-2, capacity.z_coef = 1e-3;
  MoeConfig sigmoid = capacity;
  sigmoid.router = RouterKind::Sigmoid, sigmoid.capacity_factor = 0, sigmoid.groups = 4, sigmoid.group_topk = 2;
  sigmoid.shared_experts = 1, sigmoid.shared_ffn = 64, sigmoid.bias_rate = 0.05;
  EpOptions none, chunked;
  chunked.overlap = Overlap::Chunked, chunked.chunks = 3, chunked.shared_slot = {1, -1};
  int failed = 0;
  for (const auto& [name, c] :
       {std::pair{"topk_softmax,capacity=1", capacity}, std::pair{"sigmoid,groups,shared", sigmoid}})
    for (const auto& [schedule, ep] : {std::pair{"none", none}, std::pair{"chunked,chunks=3", chunked}}) {
      std::string diff;
      try {
        diff = check(c, *comm, ep);
      } catch (const std::exception& e) {
        diff = std::string("threw: ") + e.what();
      }
      std::printf("rank %d %s overlap=%s: %s\n", comm->rank(), name, schedule, diff.empty() ? "ok" : diff.c_str());
      failed += !diff.empty();
    }
  std::fflush(stdout);
  return comm->max_over_ranks(failed) > 0 ? 1 : 0;
}
