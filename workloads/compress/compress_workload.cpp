// The compress workload: tensor codecs (lossless exponent coding, library baselines, lossy quantisers,
// sparsifiers, PowerSGD), collectives with a codec in the loop, and a bandwidth-aware codec planner.
#include <new>

#include "harness/axes.hpp"
#include "harness/registry.hpp"
#include "workloads/compress/codec.hpp"
#include "workloads/compress/inputs.hpp"
#include "workloads/compress/model_presets.hpp"
#include "workloads/compress/modes.hpp"

namespace mlsb::compress {
namespace {

class CompressWorkload final : public Workload {
 public:
  WorkloadInfo info() const override {
    WorkloadInfo w;
    w.name = "compress";
    w.description =
        "Tensor codecs (exponent entropy coding, zstd, lz4, casts, int8/fp8 block quantisers, top-k, random-k, "
        "PowerSGD) on synthetic or real tensors; collectives with a codec in the loop beside the uncompressed "
        "collective (local, mpi, nccl); a link model and a Kimad-style per-tensor codec planner.";
    w.axes = {
        string_axis("mode", {"codec"},
                    "codec: one round trip; collective: a collective with the codec; plan: "
                    "per-tensor codec choice for a model under an error budget",
                    {"codec", "collective", "plan"}),
        string_axis("codec", {"exponent"}, "codec (lossless: none, exponent, zstd, lz4)", codec_names()),
        data_axis(string_axis("dtype", {"auto"},
                              "element type: auto = bf16 for generated tensors and a file's own dtype for its tensor "
                              "(another value casts a file's tensor to it)",
                              {"auto", "bf16", "fp16", "fp32"})),
        data_axis(string_axis("distribution", {"gaussian"}, "generator of the input tensor", distribution_names())),
        data_axis(float_axis("sigma", {0.02}, "standard deviation of the generated values", 1e-30, 1e30)),
        data_axis(int_axis("elements", {1 << 22}, "elements of the generated tensor (per rank)", 1, 1LL << 40)),
        data_axis(
            path_axis("tensor_file", "none", "a .safetensors or .npy file to read the tensor from, or none", {"none"})),
        data_axis(string_axis("tensor", {"all"}, "the tensor of tensor_file by name, or all (concatenated)")),
        int_axis("level", {1}, "zstd level", -131072, 22),
        int_axis("block", {128}, "elements per scale block (int8-block, fp8-*)", 1, 1LL << 31),
        float_axis("density", {0.01}, "fraction of elements kept by topk and randomk", 1e-9, 1),
        int_axis("rank", {4}, "PowerSGD rank", 1, 65536),
        int_axis("error_feedback", {1}, "1: topk, randomk and powersgd keep the residual between steps", 0, 1),
        int_axis("threads", {1}, "codec threads (chunked codecs: exponent, zstd, lz4)", 1, 256),
        string_axis("collective", {"allreduce"}, "mode collective: the collective",
                    {"allreduce", "allgather", "reduce_scatter", "alltoall", "broadcast"}),
        string_axis("algorithm", {"auto"},
                    "mode collective: native, gather, ring (allreduce), linear (allreduce "
                    "with randomk/powersgd); auto picks by codec",
                    {"auto", "native", "gather", "ring", "linear"}),
        float_axis("link_gbps", {0.0}, "modelled link bandwidth in GB/s (0 = no model; 100 Gbit/s = 12.5)", 0, 1e6),
        data_axis(
            string_axis("model", {"gpt2-small"}, "mode plan: model preset whose tensors are planned", preset_names())),
        data_axis(int_axis("scale", {16}, "mode plan: every preset dimension is divided by this", 1, 1 << 20)),
        float_axis("error_budget", {0.01}, "mode plan: allowed relative L2 error over all tensors", 0, 10),
    };
    w.metrics = {
        {"time_ms", "ms", Better::Lower, "codec: compress + decompress; collective: the collective with the codec "
                                         "(max over ranks); plan: measured codec time + modelled wire time"},
        {"compress_gbps", "GB/s", Better::Higher, "original bytes compressed per second"},
        {"decompress_gbps", "GB/s", Better::Higher, "original bytes decompressed per second"},
        {"ratio", "ratio", Better::Higher, "original bytes / compressed bytes"},
        {"bits_per_element", "bits", Better::Lower, "compressed bits per element"},
        {"ideal_ratio", "ratio", Better::Higher, "lossless: original bits / (sign+mantissa bits + exponent entropy)"},
        {"ratio_vs_ideal", "ratio", Better::Higher, "lossless: ratio / ideal_ratio"},
        {"break_even_gbps", "GB/s", Better::Higher, "link bandwidth below which compressing pays"},
        {"rel_l2_error", "ratio", Better::Lower,
         "lossy: ||x - y|| / ||x||; with error feedback, of the codec's own input x + residual"},
        {"max_abs_error", "abs", Better::Lower, "lossy: max |x - y|"},
        {"snr_db", "dB", Better::Higher, "lossy: 10 log10(||x||^2 / ||x - y||^2), capped at 300"},
        {"nonfinite_outputs", "count", Better::Lower, "lossy: finite elements decoded as Inf or NaN"},
        {"ef_rel_l2_error", "ratio", Better::Lower, "error feedback: ||sum of T decoded steps - T x|| / ||T x||"},
        {"model_time_ms", "ms", Better::Lower, "link model: compress + wire bytes / link + decompress"},
        {"model_speedup", "ratio", Better::Higher, "link model: uncompressed transfer time / model_time_ms"},
        {"baseline_time_ms", "ms", Better::Lower, "collective: the uncompressed native collective, same sample"},
        {"baseline_model_time_ms", "ms", Better::Lower, "link model: uncompressed wire bytes / link"},
        {"speedup", "ratio", Better::Higher, "baseline time / time"},
        {"algbw_gbps", "GB/s", Better::Higher, "collective: nccl-tests algbw (size / time)"},
        {"busbw_gbps", "GB/s", Better::Higher, "collective: nccl-tests busbw (algbw * collective factor)"},
        {"compress_ms", "ms", Better::Lower, "collective: time in compress (max over ranks)"},
        {"decompress_ms", "ms", Better::Lower, "collective: time in decompress and reduction (max over ranks)"},
        {"wire_bytes", "bytes", Better::Lower, "collective: bytes this rank sends under a ring schedule"},
        {"wire_ratio", "ratio", Better::Higher, "collective: uncompressed wire bytes / wire bytes"},
        {"predicted_ms", "ms", Better::Lower, "plan: the planner's predicted time"},
    };
    w.primary_metric = "time_ms";
    w.examples = {
        "run compress -p codec=none,exponent,zstd,lz4 -p elements=1M:64M:*4",
        "run compress -p codec=int8-block,fp8-e4m3,topk,powersgd -p elements=16M",
        "run compress -p mode=plan -p model=llama2-7b -p link_gbps=25",
        "run compress -p mode=collective -p collective=allreduce,alltoall -p codec=int8-block",
    };
    w.runner = {.warmup = 1, .min_samples = 5, .max_samples = 50, .min_time_s = 0.2, .max_noise = 0.05,
                .max_time_s = 10, .timeout_s = 600};
    w.backends = {"cpu", "cuda"};
    return w;
  }

  void setup(State& state) override {
    const std::string mode = state.get_string("mode");
    if (mode != "codec" && state.backend() == "cuda")
      state.skip("mode " + mode + " runs on host buffers; the cuda backend runs mode codec");
    bench_ = mode == "codec" ? make_codec_bench() : mode == "collective" ? make_collective_bench() : make_plan_bench();
    guard(state, [&] { bench_->setup(state); });
  }
  void sample(State& state) override {
    guard(state, [&] { bench_->sample(state); });
  }
  void verify(State& state) override { bench_->verify(state); }
  void teardown(State&) override { bench_.reset(); }

 private:
  // An allocation the machine cannot satisfy fails the case with the size asked for, not "std::bad_alloc".
  template <typename F>
  static void guard(State& state, F&& body) {
    try {
      body();
    } catch (const std::bad_alloc&) {
      std::string size;
      if (state.get_string("tensor_file") == "none" && state.get_string("mode") != "plan") {
        const double gib = static_cast<double>(state.get_int("elements")) *
                           static_cast<double>(dtype_size(generated_dtype(state))) / (1 << 30);
        size = " (the input alone is " + std::to_string(gib) + " GiB; codecs and collectives need a few times that)";
      }
      state.fail("out of memory: the case's buffers do not fit in this machine's memory" + size);
    }
  }

  std::unique_ptr<ModeBench> bench_;
};

}  // namespace

MLSB_REGISTER_WORKLOAD(CompressWorkload);

}  // namespace mlsb::compress
