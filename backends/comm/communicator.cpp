#include "backends/comm/communicator.hpp"

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <cstring>

#include "backends/comm/local_communicator.hpp"
#include "backends/comm/mpi_communicator.hpp"
#include "backends/comm/reduce.hpp"
#ifdef MLSB_HAVE_NCCL
#include "backends/comm/nccl_communicator.hpp"
#endif

namespace mlsb::comm {

size_t elem_size(ElemType t) {
  switch (t) {
    case ElemType::U8: return 1;
    case ElemType::I32: return 4;
    case ElemType::I64: return 8;
    case ElemType::F32: return 4;
    case ElemType::F64: return 8;
    case ElemType::F16: return 2;
    case ElemType::BF16: return 2;
  }
  throw std::invalid_argument("elem_size: unknown element type");
}

std::string_view to_string(ElemType t) {
  switch (t) {
    case ElemType::U8: return "u8";
    case ElemType::I32: return "i32";
    case ElemType::I64: return "i64";
    case ElemType::F32: return "f32";
    case ElemType::F64: return "f64";
    case ElemType::F16: return "f16";
    case ElemType::BF16: return "bf16";
  }
  return "?";
}

std::vector<uint64_t> Communicator::allgather_host_u64(uint64_t value) {
  Communicator& host = host_side();
  if (host.device_buffers())
    throw CommError(name() + ": expect_same needs a host path this communicator does not provide");
  std::vector<uint64_t> all(static_cast<size_t>(size()));
  host.allgather(&value, all.data(), 1, ElemType::I64);
  return all;
}

void Communicator::expect_same(std::string_view what, uint64_t value) {
  const std::vector<uint64_t> all = allgather_host_u64(value);
  for (size_t r = 0; r < all.size(); ++r)
    if (all[r] != value)
      throw CommError(name() + " expect_same: " + std::string(what) + " differs across ranks: rank " +
                      std::to_string(rank()) + " has " + std::to_string(value) + ", rank " + std::to_string(r) +
                      " has " + std::to_string(all[r]));
}

double Communicator::max_over_ranks(double value) {
  double best = value;
  for (const uint64_t bits : allgather_host_u64(std::bit_cast<uint64_t>(value)))
    best = std::max(best, std::bit_cast<double>(bits));
  return best;
}

namespace {

struct CompletedRequest final : CommRequest {
  bool test() override { return true; }
  void wait() override {}
};

}  // namespace

std::unique_ptr<CommRequest> Communicator::ialltoallv(const void* send, std::span<const size_t> send_bytes, void* recv,
                                                      std::span<const size_t> recv_bytes) {
  alltoallv(send, send_bytes, recv, recv_bytes);
  return std::make_unique<CompletedRequest>();
}

void Communicator::reduce_scatter_v(const void* send, void* recv, std::span<const size_t> counts, ElemType type,
                                    ReduceOp op) {
  if (counts.size() != static_cast<size_t>(size()))
    throw CommError(name() + " reduce_scatter_v: " + std::to_string(counts.size()) + " counts for " +
                    std::to_string(size()) + " ranks");
  const size_t es = elem_size(type), mine = counts[static_cast<size_t>(rank())] * es;
  std::vector<size_t> send_bytes(counts.size()), recv_bytes(counts.size(), mine);
  for (size_t r = 0; r < counts.size(); ++r) send_bytes[r] = counts[r] * es;
  std::vector<unsigned char> arrived(mine * counts.size());
  alltoallv(send, send_bytes, arrived.data(), recv_bytes);
  if (mine == 0) return;
  std::memcpy(recv, arrived.data(), mine);
  for (size_t r = 1; r < counts.size(); ++r) reduce_into(recv, arrived.data() + r * mine, mine / es, type, op);
}

std::unique_ptr<Communicator> Communicator::make_duplicate() {
  throw CommError(name() + ": this communicator cannot be duplicated");
}

std::unique_ptr<Communicator> Communicator::make_split(int, int) {
  throw CommError(name() + ": this communicator cannot be split");
}

int node_local_rank(int rank) {
  for (const char* var : {"OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID", "MPI_LOCALRANKID"})
    if (const char* v = std::getenv(var)) return std::atoi(v);
  return rank;
}

int launcher_world_size() {
  for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS"})
    if (const char* v = std::getenv(var)) return std::max(1, std::atoi(v));
  return 1;
}

int launcher_rank() {
  for (const char* var : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"})
    if (const char* v = std::getenv(var)) return std::max(0, std::atoi(v));
  return 0;
}

std::string resolve_comm_kind(std::string_view kind) {
  if (kind == "local" || kind == "mpi" || kind == "nccl") return std::string(kind);
  if (kind != "auto")
    throw std::invalid_argument("comm: '" + std::string(kind) + "' is not auto, local, mpi or nccl");
  for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE"})
    if (std::getenv(var)) return "mpi";
  return "local";
}

std::unique_ptr<Communicator> make_communicator(std::string_view kind) {
  const std::string k = resolve_comm_kind(kind);
  if (k == "local") return make_local_communicator();
  if (k == "mpi") return make_mpi_communicator();
#ifdef MLSB_HAVE_NCCL
  // The bootstrap lives as long as the process; each nccl communicator keeps a duplicate of it.
  static const std::unique_ptr<Communicator> bootstrap = make_mpi_communicator();
  return make_nccl_communicator(*bootstrap);
#else
  throw CommError("nccl: built without CUDA/NCCL");
#endif
}

std::unique_ptr<Communicator> duplicate(Communicator& parent) {
  auto copy = parent.make_duplicate();
  copy->set_timeout(parent.timeout());
  return copy;
}

std::unique_ptr<Communicator> split(Communicator& parent, int color, int key) {
  if (color < 0) throw std::invalid_argument("split: color must be >= 0, got " + std::to_string(color));
  auto part = parent.make_split(color, key);
  part->set_timeout(parent.timeout());
  part->set_settle_time(parent.settle_time());
  part->set_cancel_flag(parent.cancel_flag());
  return part;
}

}  // namespace mlsb::comm
