#include "workloads/compress/collectives/compressed_collective.hpp"

#include <cstring>
#include <numeric>
#include <stdexcept>
#include <string>

#include "util/clock.hpp"

namespace mlsb::compress {
namespace {

using comm::Collective;

comm::ElemType elem_type(DType t) {
  switch (t) {
    case DType::F32: return comm::ElemType::F32;
    case DType::F16: return comm::ElemType::F16;
    case DType::BF16: return comm::ElemType::BF16;
  }
  return comm::ElemType::F32;
}

TensorView slice(TensorView t, int64_t begin, int64_t n) {
  return {t.data + static_cast<size_t>(begin) * dtype_size(t.dtype), n, t.dtype, {}};
}
MutableTensorView slice(MutableTensorView t, int64_t begin, int64_t n) {
  return {t.data + static_cast<size_t>(begin) * dtype_size(t.dtype), n, t.dtype};
}

// Offsets (prefix sums) of byte counts.
std::vector<size_t> offsets_of(const std::vector<size_t>& sizes) {
  std::vector<size_t> off(sizes.size() + 1, 0);
  for (size_t i = 0; i < sizes.size(); ++i) off[i + 1] = off[i] + sizes[i];
  return off;
}

// Every rank's value of a byte count, through an allgather of 64-bit integers.
std::vector<size_t> gather_sizes(comm::Communicator& c, size_t mine) {
  std::vector<int64_t> all(c.size());
  const auto v = static_cast<int64_t>(mine);
  c.allgather(&v, all.data(), 1, comm::ElemType::I64);
  return {all.begin(), all.end()};
}

// Compresses into a buffer sized for the worst case; returns the bytes used.
size_t encode(Codec& codec, TensorView in, std::vector<uint8_t>& buf) {
  buf.resize(codec.max_compressed_bytes(in));
  return codec.compress(in, buf);
}

void require_divisible(Collective op, int64_t count, int n) {
  if (count % n != 0)
    throw std::invalid_argument(std::string(comm::to_string(op)) + ": " + std::to_string(count) +
                                " elements per rank do not split into " + std::to_string(n) + " equal blocks");
}

}  // namespace

Algorithm parse_algorithm(std::string_view name) {
  if (name == "native") return Algorithm::Native;
  if (name == "gather") return Algorithm::Gather;
  if (name == "ring") return Algorithm::Ring;
  if (name == "linear") return Algorithm::Linear;
  throw std::invalid_argument("algorithm: '" + std::string(name) + "' is not native, gather, ring or linear");
}

std::string_view to_string(Algorithm a) {
  switch (a) {
    case Algorithm::Native: return "native";
    case Algorithm::Gather: return "gather";
    case Algorithm::Ring: return "ring";
    case Algorithm::Linear: return "linear";
  }
  return "?";
}

Algorithm default_algorithm(Collective op, std::string_view codec) {
  if (codec == "none") return Algorithm::Native;
  const CodecSpec& spec = codec_spec(codec);
  if (op != Collective::AllReduce || (spec.stateful && !spec.summable)) return Algorithm::Gather;
  return spec.summable ? Algorithm::Linear : Algorithm::Ring;
}

int64_t collective_output_count(Collective op, int64_t count, int ranks) {
  switch (op) {
    case Collective::AllGather: return count * ranks;
    case Collective::ReduceScatter: return count / ranks;
    default: return count;
  }
}

CompressedCollective::CompressedCollective(comm::Communicator& comm, Collective op, Algorithm algorithm,
                                           const CodecConfig& codec)
    : comm_(comm), op_(op), algorithm_(algorithm), config_(codec) {
  const std::string where = "algorithm " + std::string(to_string(algorithm)) + " with codec " + codec.name;
  if ((algorithm == Algorithm::Ring || algorithm == Algorithm::Linear) && op != Collective::AllReduce)
    throw std::invalid_argument(where + ": only allreduce (not " + std::string(comm::to_string(op)) + ")");
  const CodecSpec& spec = codec_spec(codec.name);
  if (algorithm == Algorithm::Ring && spec.stateful)
    throw std::invalid_argument(where + ": ring compresses a different chunk each step, so stateful codecs "
                                "(topk, randomk, powersgd) use gather or linear");
  if (algorithm == Algorithm::Linear && !spec.summable)
    throw std::invalid_argument(where + ": only randomk and powersgd encodings can be summed");
  if (algorithm == Algorithm::Native && codec.name != "none")
    throw std::invalid_argument(where + ": native collectives are uncompressed (codec none)");
  if (algorithm == Algorithm::Gather || algorithm == Algorithm::Ring) codec_ = make_codec(codec);
  if (algorithm == Algorithm::Linear) make_codec(codec);  // validates density / rank like the other paths
}

CollectiveStats CompressedCollective::run(TensorView in, MutableTensorView out) {
  const int n = comm_.size();
  if ((op_ == Collective::ReduceScatter || op_ == Collective::AllToAll)) require_divisible(op_, in.count, n);
  if (out.count != collective_output_count(op_, in.count, n) || out.dtype != in.dtype)
    throw std::invalid_argument("collective output holds " + std::to_string(out.count) + " elements, expected " +
                                std::to_string(collective_output_count(op_, in.count, n)));
  switch (algorithm_) {
    case Algorithm::Native: return run_native(in, out);
    case Algorithm::Gather: return run_gather(in, out);
    case Algorithm::Ring: return run_ring(in, out);
    case Algorithm::Linear: return run_linear(in, out);
  }
  return {};
}

CollectiveStats CompressedCollective::run_native(TensorView in, MutableTensorView out) {
  const int n = comm_.size();
  const comm::ElemType t = elem_type(in.dtype);
  const auto count = static_cast<size_t>(in.count);
  switch (op_) {
    case Collective::AllReduce: comm_.allreduce(in.data, out.data, count, t, comm::ReduceOp::Sum); break;
    case Collective::AllGather: comm_.allgather(in.data, out.data, count, t); break;
    case Collective::ReduceScatter: comm_.reduce_scatter(in.data, out.data, count / n, t, comm::ReduceOp::Sum); break;
    case Collective::AllToAll: comm_.alltoall(in.data, out.data, count / n, t); break;
    case Collective::Broadcast:
      if (in.data != out.data) {
        if (comm_.device_buffers())
          throw std::invalid_argument("broadcast on device buffers runs in place: pass one buffer as input and output");
        std::memcpy(out.data, in.data, in.bytes());
      }
      comm_.broadcast(out.data, count, t, 0);
      break;
  }
  CollectiveStats s;
  s.wire_bytes = comm::busbw_factor(op_, n) * comm::algbw_bytes(op_, static_cast<double>(in.bytes()), n);
  return s;
}

CollectiveStats CompressedCollective::run_gather(TensorView in, MutableTensorView out) {
  const int n = comm_.size(), me = comm_.rank();
  CollectiveStats s;
  std::vector<uint8_t> sbuf, rbuf;
  // allreduce / allgather / broadcast exchange one stream per rank; reduce-scatter / all-to-all one per block.
  const bool per_block = op_ == Collective::ReduceScatter || op_ == Collective::AllToAll;
  const int64_t block = per_block ? in.count / n : in.count;
  std::vector<size_t> send_sizes, recv_sizes;
  auto t0 = Clock::now();
  if (per_block) {
    std::vector<uint8_t> part;
    for (int r = 0; r < n; ++r) {
      const size_t bytes = encode(*codec_, slice(in, r * block, block), part);
      sbuf.insert(sbuf.end(), part.begin(), part.begin() + static_cast<std::ptrdiff_t>(bytes));
      send_sizes.push_back(bytes);
      if (r != me) s.wire_bytes += static_cast<double>(bytes);
    }
  } else if (op_ != Collective::Broadcast || me == 0) {
    sbuf.resize(encode(*codec_, in, sbuf));
  }
  s.compress_s = seconds_since(t0);

  if (per_block) {
    std::vector<int64_t> sent(send_sizes.begin(), send_sizes.end()), got(n);
    comm_.alltoall(sent.data(), got.data(), 1, comm::ElemType::I64);
    recv_sizes.assign(got.begin(), got.end());
    rbuf.resize(std::accumulate(recv_sizes.begin(), recv_sizes.end(), size_t{0}));
    comm_.alltoallv(sbuf.data(), send_sizes, rbuf.data(), recv_sizes);
  } else if (op_ == Collective::Broadcast) {
    int64_t bytes = static_cast<int64_t>(sbuf.size());
    comm_.broadcast(&bytes, 1, comm::ElemType::I64, 0);
    if (me != 0) sbuf.resize(static_cast<size_t>(bytes));
    comm_.broadcast(sbuf.data(), sbuf.size(), comm::ElemType::U8, 0);
    recv_sizes.assign(1, sbuf.size());
    rbuf.swap(sbuf);
    s.wire_bytes = static_cast<double>(rbuf.size());
  } else {
    recv_sizes = gather_sizes(comm_, sbuf.size());
    rbuf.resize(std::accumulate(recv_sizes.begin(), recv_sizes.end(), size_t{0}));
    comm_.allgatherv(sbuf.data(), sbuf.size(), rbuf.data(), recv_sizes);
    s.wire_bytes = static_cast<double>(n - 1) * static_cast<double>(sbuf.size());
  }

  t0 = Clock::now();
  const auto off = offsets_of(recv_sizes);
  auto stream = [&](size_t r) { return std::span<const uint8_t>(rbuf.data() + off[r], recv_sizes[r]); };
  if (op_ == Collective::AllReduce || op_ == Collective::ReduceScatter) {
    // Decode every rank's contribution and sum in rank order, in fp32, rounding once at the end.
    const int64_t len = out.count;
    std::vector<float> acc(static_cast<size_t>(len), 0.0f);
    std::vector<uint8_t> tmp(static_cast<size_t>(len) * dtype_size(in.dtype));
    for (int r = 0; r < n; ++r) {
      MutableTensorView dec{tmp.data(), len, in.dtype};
      codec_->decompress(stream(static_cast<size_t>(r)), dec);
      for (int64_t i = 0; i < len; ++i) acc[static_cast<size_t>(i)] += load_float(tmp.data(), in.dtype, i);
    }
    from_float(acc, out);
  } else if (op_ == Collective::Broadcast) {
    codec_->decompress(stream(0), out);
  } else {  // allgather, alltoall: rank r's stream lands in block r
    const int64_t len = op_ == Collective::AllGather ? in.count : block;
    for (int r = 0; r < n; ++r) codec_->decompress(stream(static_cast<size_t>(r)), slice(out, r * len, len));
  }
  s.decompress_s = seconds_since(t0);
  return s;
}

CollectiveStats CompressedCollective::run_ring(TensorView in, MutableTensorView out) {
  const int n = comm_.size(), me = comm_.rank();
  const int right = (me + 1) % n, left = (me + n - 1) % n;
  std::memcpy(out.data, in.data, in.bytes());
  CollectiveStats s;
  auto lo = [&](int j) { return in.count * j / n; };
  auto chunk = [&](int j) { return slice(out, lo(j), lo(j + 1) - lo(j)); };
  std::vector<uint8_t> sbuf, rbuf, tmp;
  // Sends chunk `send` to the right, receives the left neighbour's stream into rbuf.
  auto exchange = [&](int send) {
    const MutableTensorView c = chunk(send);
    auto t0 = Clock::now();
    const size_t bytes = encode(*codec_, {c.data, c.count, c.dtype, {}}, sbuf);
    s.compress_s += seconds_since(t0);
    int64_t sent = static_cast<int64_t>(bytes), got = 0;
    comm_.sendrecv(&sent, sizeof sent, right, &got, sizeof got, left);
    if (got < 0) throw comm::CommError("ring allreduce: rank " + std::to_string(left) + " sent a negative size");
    rbuf.resize(static_cast<size_t>(got));
    comm_.sendrecv(sbuf.data(), bytes, right, rbuf.data(), rbuf.size(), left);
    s.wire_bytes += static_cast<double>(bytes);
  };
  for (int step = 0; step < n - 1; ++step) {  // reduce-scatter: partial sums travel right
    const int send = (me - step + 2 * n) % n, recv = (me - step - 1 + 2 * n) % n;
    exchange(send);
    const MutableTensorView c = chunk(recv);
    auto t0 = Clock::now();
    tmp.resize(c.bytes());
    codec_->decompress(rbuf, {tmp.data(), c.count, c.dtype});
    for (int64_t i = 0; i < c.count; ++i)
      store_float(c.data, c.dtype, i, load_float(c.data, c.dtype, i) + load_float(tmp.data(), c.dtype, i));
    s.decompress_s += seconds_since(t0);
  }
  for (int step = 0; step < n - 1; ++step) {  // allgather: reduced chunks travel right
    const int send = (me + 1 - step + 2 * n) % n, recv = (me - step + 2 * n) % n;
    exchange(send);
    auto t0 = Clock::now();
    if (step == 0 && !codec_->lossless()) {
      // The owner keeps what the others decode, so every rank ends with the same values.
      const MutableTensorView own = chunk(send);
      codec_->decompress({sbuf.data(), sbuf.size()}, own);
    }
    codec_->decompress(rbuf, chunk(recv));
    s.decompress_s += seconds_since(t0);
  }
  return s;
}

CollectiveStats CompressedCollective::run_linear(TensorView in, MutableTensorView out) {
  const int n = comm_.size();
  const auto count = static_cast<size_t>(in.count);
  CollectiveStats s;
  auto t0 = Clock::now();
  std::vector<float> x(count);
  to_float(in, x);
  feedback_.apply(x);
  const double ring = n > 1 ? 2.0 * (n - 1) / n : 0.0;  // allreduce's busbw factor
  if (config_.name == "randomk") {
    const int64_t k = sparse_k(in.count, config_.density);
    const auto idx = randomk_indices(in.count, k, config_.seed, step_++);
    std::vector<float> vals(static_cast<size_t>(k)), local(count, 0.0f);
    for (int64_t i = 0; i < k; ++i) local[idx[i]] = vals[i] = x[idx[i]];
    feedback_.update(x, local);
    s.compress_s = seconds_since(t0);
    comm_.allreduce(vals.data(), vals.data(), vals.size(), comm::ElemType::F32, comm::ReduceOp::Sum);
    t0 = Clock::now();
    std::fill(local.begin(), local.end(), 0.0f);
    for (int64_t i = 0; i < k; ++i) local[idx[i]] = vals[i];
    from_float(local, out);
    s.decompress_s = seconds_since(t0);
    s.wire_bytes = ring * 4.0 * static_cast<double>(k);
    return s;
  }
  const std::vector<int64_t> shape(in.shape.begin(), in.shape.end());
  const MatrixShape ms = powersgd_matrix_shape(in.count, shape);
  if (!powersgd_ || powersgd_->shape().rows != ms.rows || powersgd_->shape().cols != ms.cols)
    powersgd_ = std::make_unique<PowerSgd>(ms, config_.rank, config_.seed);
  const int r = config_.rank;
  const auto cells = static_cast<size_t>(ms.rows * ms.cols);
  std::vector<float> m(cells, 0.0f), p(static_cast<size_t>(ms.rows) * r), recon(cells);
  std::copy(x.begin(), x.end(), m.begin());
  powersgd_->compute_p(m.data(), p.data());
  s.compress_s = seconds_since(t0);
  comm_.allreduce(p.data(), p.data(), p.size(), comm::ElemType::F32, comm::ReduceOp::Sum);
  t0 = Clock::now();
  PowerSgd::orthonormalize(p.data(), ms.rows, r);
  float* q = powersgd_->compute_q(m.data(), p.data());
  powersgd_->reconstruct(p.data(), recon.data());
  feedback_.update(x, std::span<const float>(recon.data(), count));
  s.compress_s += seconds_since(t0);
  comm_.allreduce(q, q, static_cast<size_t>(ms.cols) * r, comm::ElemType::F32, comm::ReduceOp::Sum);
  t0 = Clock::now();
  powersgd_->reconstruct(p.data(), recon.data());
  from_float(std::span<const float>(recon.data(), count), out);
  s.decompress_s = seconds_since(t0);
  s.wire_bytes = ring * 4.0 * static_cast<double>(ms.rows + ms.cols) * r;
  return s;
}

}  // namespace mlsb::compress
