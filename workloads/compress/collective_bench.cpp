// compress.collective: a collective with the codec in the loop, timed beside the communicator's own
// uncompressed collective on the same data in the same sample (nccl-tests' algbw/busbw definitions).
#include <cmath>
#include <cstring>

#include "backends/comm/bandwidth.hpp"
#include "backends/comm/communicator.hpp"
#include "backends/cuda/device_buffer.hpp"
#include "harness/axes.hpp"
#include "harness/registry.hpp"
#include "util/clock.hpp"
#include "workloads/compress/case_setup.hpp"
#include "workloads/compress/collectives/compressed_collective.hpp"
#include "workloads/compress/error_metrics.hpp"
#include "workloads/compress/family.hpp"
#include "workloads/compress/link_model.hpp"

namespace mlsb::compress {
namespace {

struct Timed {
  CollectiveStats stats;
  double seconds = 0;  // this rank's wall time of the collective
};

class CollectiveBench final : public Workload {
 public:
  WorkloadInfo info() const override {
    WorkloadInfo w;
    w.name = "compress.collective";
    w.description =
        "A collective (allreduce, allgather, reduce_scatter, alltoall, broadcast) with a codec in the loop, timed "
        "beside the communicator's own uncompressed collective on the same data in the same sample (local, mpi, "
        "nccl; nccl-tests' algbw/busbw), with a link model.";
    w.axes = {
        string_axis("collective", {"allreduce"}, "the collective",
                    {"allreduce", "allgather", "reduce_scatter", "alltoall", "broadcast"}),
        string_axis("algorithm", {"auto"},
                    "native, gather, ring (allreduce), linear (allreduce with randomk/powersgd); auto picks by codec",
                    {"auto", "native", "gather", "ring", "linear"}),
    };
    for (auto& a : codec_axes()) w.axes.push_back(std::move(a));
    for (auto& a : input_axes()) w.axes.push_back(std::move(a));
    w.axes.push_back(link_axis());
    w.metrics = family_metrics({"time_ms", "baseline_time_ms", "speedup", "algbw_gbps", "busbw_gbps", "compress_ms",
                                "decompress_ms", "wire_bytes", "wire_ratio", "rel_l2_error", "max_abs_error", "snr_db",
                                "model_time_ms", "baseline_model_time_ms", "model_speedup"});
    w.metrics[0].help = "the collective with the codec (max over ranks)";
    w.primary_metric = "time_ms";
    w.examples = {
        "run compress.collective -p collective=allreduce,alltoall -p codec=none,int8-block",
        "run compress.collective -p codec=randomk,powersgd -p dtype=fp32 -p link_gbps=12.5",
        "run compress.collective -p codec=exponent -p algorithm=ring,gather",
    };
    w.runner = family_runner();
    return w;
  }
  std::string memory_hint(const State& state) const override { return input_memory_hint(state); }

  void setup(State& state) override {
    comm_ = &state.comm();
    const int n = comm_->size();
    op_ = comm::parse_collective(state.get_string("collective"));
    config_ = codec_config(state);
    device_ = comm_->device_buffers();
    if (device_ && config_.name != "none")
      state.skip("on nccl the collective runs uncompressed (codec none): compressed collectives on device "
                 "buffers are not wired yet (use --comm mpi for them)");
    const std::string algo = state.get_string("algorithm");
    algorithm_ = algo == "auto" ? default_algorithm(op_, config_.name) : parse_algorithm(algo);
    try {
      measured_ = std::make_unique<CompressedCollective>(*comm_, op_, algorithm_, config_);
    } catch (const std::invalid_argument& e) {
      state.skip(e.what());
    }
    baseline_ = std::make_unique<CompressedCollective>(*comm_, op_, Algorithm::Native, CodecConfig{"none"});
    input_ = case_input(state, comm_->rank());
    if ((op_ == comm::Collective::ReduceScatter || op_ == comm::Collective::AllToAll) && input_.count() % n != 0) {
      const int64_t keep = input_.count() / n * n;
      state.warn(std::to_string(input_.count()) + " elements do not split into " + std::to_string(n) +
                 " blocks; using the first " + std::to_string(keep));
      input_.data.resize(static_cast<size_t>(keep) * dtype_size(input_.dtype));
      input_.shape = {keep};
    }
    comm_->expect_same("elements per rank", static_cast<uint64_t>(input_.count()));
    comm_->expect_same("dtype", static_cast<uint64_t>(input_.dtype));
    const int64_t out_count = collective_output_count(op_, input_.count(), n);
    const size_t out_bytes = static_cast<size_t>(out_count) * dtype_size(input_.dtype);
    out_.assign(out_bytes, 0);
    ref_.assign(out_bytes, 0);
    link_gbps_ = state.get_float("link_gbps");
    if (device_) {
      d_in_ = std::make_unique<cuda::DeviceBuffer>(input_.data.size());
      d_out_ = std::make_unique<cuda::DeviceBuffer>(out_bytes);
      d_in_->upload(input_.data.data(), input_.data.size());
    }
  }

  void sample(State& state) override {
    if (device_) return sample_device(state);
    const Timed base = timed(*baseline_, ref_);
    const Timed meas = timed(*measured_, out_);
    // The slowest rank defines a collective's time; the codec's share is the slowest rank's too.
    double v[4] = {base.seconds, meas.seconds, meas.stats.compress_s, meas.stats.decompress_s};
    comm_->allreduce(v, v, 4, comm::ElemType::F64, comm::ReduceOp::Max);
    const int n = comm_->size();
    const double bytes = comm::algbw_bytes(op_, static_cast<double>(input_.data.size()), n);
    const double algbw = bytes / v[1] / 1e9;
    state.record("time_ms", v[1] * 1e3);
    state.record("baseline_time_ms", v[0] * 1e3);
    state.record("speedup", v[0] / v[1]);
    state.record("algbw_gbps", algbw);
    state.record("busbw_gbps", algbw * comm::busbw_factor(op_, n));
    state.record("compress_ms", v[2] * 1e3);
    state.record("decompress_ms", v[3] * 1e3);
    state.record("wire_bytes", meas.stats.wire_bytes);
    if (meas.stats.wire_bytes > 0) state.record("wire_ratio", base.stats.wire_bytes / meas.stats.wire_bytes);
    if (!is_lossless(config_.name)) {
      const ErrorMetrics e = compare_tensors(view(ref_), view(out_));
      last_error_ = e.rel_l2;
      if (std::isfinite(e.rel_l2)) state.record("rel_l2_error", e.rel_l2);
      if (std::isfinite(e.max_abs)) state.record("max_abs_error", e.max_abs);
      if (std::isfinite(e.snr_db)) state.record("snr_db", std::min(e.snr_db, 300.0));
    }
    if (link_gbps_ > 0) {
      const double model = modelled_step_s(v[2], meas.stats.wire_bytes, v[3], link_gbps_);
      const double base_model = transfer_s(base.stats.wire_bytes, link_gbps_);
      state.record("model_time_ms", model * 1e3);
      state.record("baseline_model_time_ms", base_model * 1e3);
      if (model > 0) state.record("model_speedup", base_model / model);
    }
  }

  // Lossless: the compressed run equals its uncompressed twin (same algorithm, codec none) bit for bit,
  // and the twin equals the native collective (exactly without arithmetic; within rounding for sums).
  // Lossy: the error against the native result is within the codec's bound (finite data).
  void verify(State& state) override {
    if (device_) return verify_device(state);
    const bool reduces = op_ == comm::Collective::AllReduce || op_ == comm::Collective::ReduceScatter;
    if (is_lossless(config_.name)) {
      if (algorithm_ != Algorithm::Native) {
        CompressedCollective twin(*comm_, op_, algorithm_, CodecConfig{"none"});
        std::vector<uint8_t> twin_out(out_.size());
        twin.run(input_.view(), mutable_view(twin_out));
        if (twin_out != out_) state.fail("the " + config_.name + " result differs from the uncompressed " +
                                         std::string(to_string(algorithm_)) + " run on the same data");
        if (!reduces && twin_out != ref_) state.fail("the uncompressed " + std::string(to_string(algorithm_)) +
                                                     " result differs from the native collective");
      }
      if (reduces) {
        const ErrorMetrics e = compare_tensors(view(ref_), view(out_));
        const double tol = input_.dtype == DType::F32 ? 1e-5 : 1e-2;
        if (e.rel_l2 > tol)
          state.fail("the result differs from the native collective by relative L2 " + std::to_string(e.rel_l2));
      }
    } else if (std::isfinite(last_error_) && last_error_ > codec_spec(config_.name).error_bound * comm_->size()) {
      state.fail("relative L2 error " + std::to_string(last_error_) + " exceeds the bound of " + config_.name);
    }
  }

 private:
  // nccl: the NCCL collective itself on device buffers (nccl-tests' measurement), max over ranks.
  void sample_device(State& state) {
    const bool in_place = op_ == comm::Collective::Broadcast;
    if (in_place) d_out_->copy_from(*d_in_, input_.data.size());
    const TensorView in{static_cast<const uint8_t*>(in_place ? d_out_->data() : d_in_->data()), input_.count(),
                        input_.dtype, {}};
    const MutableTensorView out{static_cast<uint8_t*>(d_out_->data()),
                                static_cast<int64_t>(out_.size() / dtype_size(input_.dtype)), input_.dtype};
    comm_->barrier();
    const auto t0 = Clock::now();
    const CollectiveStats stats = baseline_->run(in, out);
    const double t = comm_->max_over_ranks(seconds_since(t0));
    const double algbw = comm::algbw_bytes(op_, static_cast<double>(input_.data.size()), comm_->size()) / t / 1e9;
    state.record("time_ms", t * 1e3);
    state.record("algbw_gbps", algbw);
    state.record("busbw_gbps", algbw * comm::busbw_factor(op_, comm_->size()));
    state.record("wire_bytes", stats.wire_bytes);
  }

  // nccl: what each rank can check alone — its own block of a data-moving collective, and a one-rank
  // reduction — equals its input.
  void verify_device(State& state) {
    d_out_->download(out_.data(), out_.size());
    const int n = comm_->size(), me = comm_->rank();
    const size_t bytes = input_.data.size();
    const uint8_t* own = nullptr;
    size_t len = bytes, at = 0;
    switch (op_) {
      case comm::Collective::AllGather: own = out_.data() + static_cast<size_t>(me) * bytes; break;
      case comm::Collective::AllToAll: len = bytes / n, at = static_cast<size_t>(me) * len, own = out_.data() + at; break;
      case comm::Collective::Broadcast: own = me == 0 ? out_.data() : nullptr; break;
      default: own = n == 1 ? out_.data() : nullptr; break;
    }
    if (own && std::memcmp(own, input_.data.data() + at, len) != 0)
      state.fail("the nccl " + std::string(comm::to_string(op_)) + " changed this rank's own data");
  }

  Timed timed(CompressedCollective& c, std::vector<uint8_t>& out) {
    comm_->barrier();
    const auto t0 = Clock::now();
    Timed t;
    t.stats = c.run(input_.view(), mutable_view(out));
    t.seconds = seconds_since(t0);
    return t;
  }
  TensorView view(const std::vector<uint8_t>& b) const {
    return {b.data(), static_cast<int64_t>(b.size() / dtype_size(input_.dtype)), input_.dtype, {}};
  }
  MutableTensorView mutable_view(std::vector<uint8_t>& b) const {
    return {b.data(), static_cast<int64_t>(b.size() / dtype_size(input_.dtype)), input_.dtype};
  }

  comm::Communicator* comm_ = nullptr;
  comm::Collective op_ = comm::Collective::AllReduce;
  Algorithm algorithm_ = Algorithm::Native;
  CodecConfig config_;
  std::unique_ptr<CompressedCollective> measured_, baseline_;
  Tensor input_;
  std::vector<uint8_t> out_, ref_;
  double link_gbps_ = 0, last_error_ = 0;
  bool device_ = false;
  std::unique_ptr<cuda::DeviceBuffer> d_in_, d_out_;
};

}  // namespace

MLSB_REGISTER_WORKLOAD(CollectiveBench);

}  // namespace mlsb::compress
