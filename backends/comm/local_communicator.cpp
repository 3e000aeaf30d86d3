#include "backends/comm/local_communicator.hpp"

#include <cstring>

namespace mlsb::comm {
namespace {

size_t checked_bytes(size_t count, ElemType type, const char* what) {
  const size_t es = elem_size(type);
  if (count > SIZE_MAX / es) throw CommError(std::string("local ") + what + ": element count overflows");
  return count * es;
}

void copy(const void* from, void* to, size_t bytes) {
  if (bytes && from != to) std::memmove(to, from, bytes);
}

class LocalCommunicator final : public Communicator {
 public:
  std::string name() const override { return "local"; }
  int rank() const override { return 0; }
  int size() const override { return 1; }

  void barrier() override {}
  void allreduce(const void* send, void* recv, size_t count, ElemType type, ReduceOp) override {
    copy(send, recv, checked_bytes(count, type, "allreduce"));
  }
  void allgather(const void* send, void* recv, size_t count, ElemType type) override {
    copy(send, recv, checked_bytes(count, type, "allgather"));
  }
  void allgatherv(const void* send, size_t send_bytes, void* recv, std::span<const size_t> recv_bytes) override {
    if (recv_bytes.size() != 1 || recv_bytes[0] != send_bytes)
      throw CommError("local allgatherv: recv_bytes must hold one entry equal to send_bytes");
    copy(send, recv, send_bytes);
  }
  void reduce_scatter(const void* send, void* recv, size_t count, ElemType type, ReduceOp) override {
    copy(send, recv, checked_bytes(count, type, "reduce_scatter"));
  }
  void alltoall(const void* send, void* recv, size_t count, ElemType type) override {
    copy(send, recv, checked_bytes(count, type, "alltoall"));
  }
  void alltoallv(const void* send, std::span<const size_t> send_bytes, void* recv,
                 std::span<const size_t> recv_bytes) override {
    if (send_bytes.size() != 1 || recv_bytes.size() != 1 || send_bytes[0] != recv_bytes[0])
      throw CommError("local alltoallv: send_bytes and recv_bytes must hold one equal entry");
    copy(send, recv, send_bytes[0]);
  }
  void broadcast(void*, size_t, ElemType, int root) override {
    if (root != 0) throw CommError("local broadcast: root " + std::to_string(root) + " is not rank 0");
  }
  void sendrecv(const void* send, size_t send_bytes, int dst, void* recv, size_t recv_bytes, int src) override {
    if (dst != 0 || src != 0)
      throw CommError("local sendrecv: peers " + std::to_string(dst) + "/" + std::to_string(src) + " are not rank 0");
    if (send_bytes != recv_bytes)
      throw CommError("local sendrecv: sends " + std::to_string(send_bytes) + " bytes but expects " +
                      std::to_string(recv_bytes));
    copy(send, recv, send_bytes);
  }
  std::unique_ptr<Communicator> make_duplicate() override { return make_local_communicator(); }
  std::unique_ptr<Communicator> make_split(int, int) override { return make_local_communicator(); }
};

}  // namespace

std::unique_ptr<Communicator> make_local_communicator() { return std::make_unique<LocalCommunicator>(); }

}  // namespace mlsb::comm
