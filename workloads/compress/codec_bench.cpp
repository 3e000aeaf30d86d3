// compress.codec: one codec's round trip on one tensor, on the CPU or (backend cuda) on the GPU.
#include <cmath>
#include <cstring>
#include <optional>

#include "backends/comm/communicator.hpp"
#include "harness/registry.hpp"
#include "workloads/compress/error_metrics.hpp"
#include "workloads/compress/exponent.hpp"
#include "workloads/compress/gpu_codecs.hpp"
#include "workloads/compress/link_model.hpp"
#include "workloads/compress/case_setup.hpp"
#include "workloads/compress/family.hpp"

namespace mlsb::compress {
namespace {

// Metrics a ratio or speed cannot be computed for (an empty tensor) are not recorded.
void record_if_finite(State& state, std::string_view metric, double value) {
  if (std::isfinite(value)) state.record(metric, value);
}

// The first element whose bytes differ, for a failure message.
std::string first_difference(const Tensor& a, const std::vector<uint8_t>& b) {
  const size_t es = dtype_size(a.dtype);
  for (int64_t i = 0; i < a.count(); ++i)
    if (std::memcmp(a.data.data() + i * es, b.data() + i * es, es) != 0) {
      uint64_t x = 0, y = 0;
      std::memcpy(&x, a.data.data() + i * es, es);
      std::memcpy(&y, b.data() + i * es, es);
      char buf[128];
      std::snprintf(buf, sizeof buf, "element %lld: 0x%llx decoded as 0x%llx", static_cast<long long>(i),
                    static_cast<unsigned long long>(x), static_cast<unsigned long long>(y));
      return buf;
    }
  return "sizes differ";
}

bool all_finite(const Tensor& t) {
  for (int64_t i = 0; i < t.count(); ++i)
    if (!std::isfinite(load_float(t.data.data(), t.dtype, i))) return false;
  return true;
}

class CodecBench final : public Workload {
 public:
  WorkloadInfo info() const override {
    WorkloadInfo w;
    w.name = "compress.codec";
    w.description =
        "One codec's round trip on one tensor (synthetic or from a .safetensors/.npy file), CPU or CUDA: "
        "lossless exponent coding, zstd, lz4; casts, int8/fp8 block quantisers, top-k, random-k, PowerSGD; "
        "ratio, GB/s, the exponent-entropy bound, the error of lossy codecs and a link model's break-even.";
    w.axes = codec_axes();
    for (auto& a : input_axes()) w.axes.push_back(std::move(a));
    w.axes.push_back(link_axis());
    w.metrics = family_metrics({"time_ms", "compress_gbps", "decompress_gbps", "ratio", "bits_per_element",
                                "ideal_ratio", "ratio_vs_ideal", "break_even_gbps", "rel_l2_error", "max_abs_error",
                                "snr_db", "nonfinite_outputs", "ef_rel_l2_error", "model_time_ms", "model_speedup",
                                "compress_host_ms", "decompress_host_ms"});
    w.metrics[0].help = "compress + decompress";
    w.primary_metric = "time_ms";
    w.examples = {
        "run compress.codec -p codec=none,exponent,zstd,lz4 -p elements=1M:64M:*4",
        "run compress.codec -p codec=int8-block,fp8-e4m3,topk,powersgd -p elements=16M",
        "run compress.codec -p codec=exponent,zstd -p link_gbps=1,12.5,50",
    };
    w.runner = family_runner();
    w.backends = {"cpu", "cuda"};
    return w;
  }
  std::string memory_hint(const State& state) const override { return input_memory_hint(state); }

  void setup(State& state) override {
    config_ = codec_config(state);
    // The report keeps a family's bars together: the 1.0-1.5x lossless ratios apart from the lossy ones.
    state.add_item("group", {{"name", is_lossless(config_.name) ? "lossless codecs" : "lossy codecs"}});
    input_ = case_input(state, state.comm().rank());
    link_gbps_ = state.get_float("link_gbps");
    gpu_ = state.backend() == "cuda";
    if (gpu_) {
      std::string why;
      if (!codec_spec(config_.name).gpu) state.skip("codec " + config_.name + " has no CUDA path");
      if (!gpu::available(&why)) state.skip("cuda: " + why);
    }
    codec_ = make_codec(config_);
    stream_.resize(codec_->max_compressed_bytes(input_.view()));
    decoded_.assign(input_.data.size(), 0);
    if (codec_->lossless()) ideal_ = exponent_ideal_ratio(input_.view());
    finite_ = all_finite(input_);
    ef_ = config_.error_feedback && codec_spec(config_.name).stateful;
    ef_sum_.assign(ef_ ? static_cast<size_t>(input_.count()) : 0, 0.0);
    ef_steps_ = 0;
  }

  void sample(State& state) override {
    const TensorView in = input_.view();
    double tc = 0, td = 0;
    if (gpu_) {
      gpu::RoundTrip rt = gpu::round_trip(config_, in);
      tc = rt.compress_ms / 1e3;
      td = rt.decompress_ms / 1e3;
      state.record("compress_host_ms", rt.compress_host_ms);
      state.record("decompress_host_ms", rt.decompress_host_ms);
      stream_size_ = rt.stream.size();
      gpu_stream_ = std::move(rt.stream);
      decoded_ = std::move(rt.decoded);
    } else {
      const TimedRoundTrip rt = timed_round_trip(*codec_, in, stream_, decoded_);
      stream_size_ = rt.stream_bytes;
      tc = rt.compress_s;
      td = rt.decompress_s;
    }
    const double bytes = static_cast<double>(in.bytes());
    // An empty tensor has no compression ratio or speed (0 bytes over a header would read as a ratio of 0).
    const double per_byte = in.count > 0 ? 1.0 : NAN;
    const double ratio = per_byte * bytes / static_cast<double>(stream_size_);
    state.record("time_ms", (tc + td) * 1e3);
    record_if_finite(state, "compress_gbps", per_byte * bytes / tc / 1e9);
    record_if_finite(state, "decompress_gbps", per_byte * bytes / td / 1e9);
    record_if_finite(state, "ratio", ratio);
    record_if_finite(state, "bits_per_element", 8.0 * static_cast<double>(stream_size_) / static_cast<double>(in.count));
    record_if_finite(state, "break_even_gbps", break_even_gbps(bytes, ratio, tc, td));
    if (codec_->lossless()) {
      state.record("ideal_ratio", ideal_);
      record_if_finite(state, "ratio_vs_ideal", ratio / ideal_);
    } else {
      const TensorView dec{decoded_.data(), in.count, in.dtype, {}};
      ErrorMetrics e = compare_tensors(in, dec);
      lost_ = e.lost;
      state.record("nonfinite_outputs", static_cast<double>(e.lost));
      // With error feedback the codec compresses x plus the residual it kept, so its error is measured
      // against that input (against x alone it would grow with the residual, sample after sample).
      if (ef_) e = record_ef(state, in, dec);
      last_error_ = e.rel_l2;
      record_if_finite(state, "rel_l2_error", e.rel_l2);
      record_if_finite(state, "max_abs_error", e.max_abs);
      record_if_finite(state, "snr_db", std::min(e.snr_db, 300.0));
    }
    if (link_gbps_ > 0) {
      const double model = modelled_step_s(tc, static_cast<double>(stream_size_), td, link_gbps_);
      state.record("model_time_ms", model * 1e3);
      record_if_finite(state, "model_speedup", transfer_s(bytes, link_gbps_) / model);
    }
  }

  void verify(State& state) override {
    if (codec_->lossless()) {
      if (std::memcmp(decoded_.data(), input_.data.data(), input_.data.size()) != 0)
        state.fail("lossless round trip differs: " + first_difference(input_, decoded_));
    } else if (finite_ && lost_ > 0) {
      state.fail(std::to_string(lost_) + " finite element(s) decoded as Inf or NaN by " + config_.name);
    } else if (finite_ && input_.count() > 0 && !(last_error_ <= codec_spec(config_.name).error_bound)) {
      state.fail("relative L2 error " + std::to_string(last_error_) + " exceeds the bound " +
                 std::to_string(codec_spec(config_.name).error_bound) + " of " + config_.name);
    }
    if (gpu_) cross_check(state);
  }

 private:
  // Error feedback on the same tensor x each step t: the codec compresses v_t = x + e_{t-1} and keeps
  // e_t = v_t - y_t, so the sum S_t of the decoded steps is t x - e_t (e_{t-1} = (t-1) x - S_{t-1}).
  // Records ef_rel_l2_error = ||S_t - t x|| / ||t x||, which error feedback drives down, and returns the
  // step's errors against the codec's own input v_t: ||v_t - y_t|| / ||v_t||, max |v_t - y_t|, SNR.
  ErrorMetrics record_ef(State& state, TensorView in, TensorView dec) {
    ++ef_steps_;
    const double t = static_cast<double>(ef_steps_);
    double num = 0, den = 0;
    ErrorMetrics step;
    for (int64_t i = 0; i < in.count; ++i) {
      const double x = load_float(in.data, in.dtype, i), y = load_float(dec.data, dec.dtype, i);
      if (!std::isfinite(x) || !std::isfinite(y)) continue;  // counted by nonfinite_outputs
      double& sum = ef_sum_[static_cast<size_t>(i)];
      const double v = t * x - sum, err = v - y;  // sum is S_{t-1} here
      step.sum_sq_x += v * v;
      step.sum_sq_error += err * err;
      step.max_abs = std::max(step.max_abs, std::abs(err));
      sum += y;
      const double d = sum - t * x;
      num += d * d;
      den += t * x * t * x;
    }
    if (den > 0) record_if_finite(state, "ef_rel_l2_error", std::sqrt(num / den));
    step.rel_l2 = step.sum_sq_x > 0 ? std::sqrt(step.sum_sq_error / step.sum_sq_x) : (step.sum_sq_error > 0 ? INFINITY : 0);
    step.snr_db = 10 * std::log10(step.sum_sq_x / step.sum_sq_error);
    return step;
  }

  // The CPU codec is the oracle of the GPU one: it decodes the GPU's stream to the same bytes.
  void cross_check(State& state) {
    std::vector<uint8_t> cpu(input_.data.size());
    try {
      codec_->decompress(gpu_stream_, {cpu.data(), input_.count(), input_.dtype});
    } catch (const CodecError& e) {
      state.fail(std::string("the CPU decoder rejects the GPU stream: ") + e.what());
    }
    if (cpu != decoded_) state.fail("the CPU decode of the GPU stream differs from the GPU decode");
  }

  CodecConfig config_;
  Tensor input_;
  std::unique_ptr<Codec> codec_;
  std::vector<uint8_t> stream_, decoded_, gpu_stream_;
  size_t stream_size_ = 0;
  double ideal_ = 1, link_gbps_ = 0, last_error_ = 0;
  int64_t lost_ = 0;
  bool gpu_ = false, finite_ = true, ef_ = false;
  std::vector<double> ef_sum_;
  int64_t ef_steps_ = 0;
};

}  // namespace

MLSB_REGISTER_WORKLOAD(CodecBench);

}  // namespace mlsb::compress
