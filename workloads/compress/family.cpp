#include "workloads/compress/family.hpp"


#include "harness/alias.hpp"
#include "harness/axes.hpp"
#include "workloads/compress/case_setup.hpp"
#include "workloads/compress/codec.hpp"
#include "workloads/compress/inputs.hpp"

namespace mlsb::compress {

MLSB_REGISTER_ALIAS(({"compress", "mode", "codec",
                      {{"codec", "compress.codec"}, {"collective", "compress.collective"}, {"plan", "compress.plan"}}}));

std::vector<Axis> input_axes() {
  return {
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
  };
}

std::vector<Axis> codec_axes() {
  return {
      string_axis("codec", {"exponent"}, "codec (lossless: none, exponent, zstd, lz4)", codec_names()),
      applies_when(int_axis("level", {1}, "zstd level", -131072, 22), "codec", {"zstd"}),
      applies_when(int_axis("block", {128}, "elements per scale block (int8-block, fp8-*)", 1, 1LL << 31), "codec",
                   {"int8-block", "fp8-e4m3", "fp8-e5m2"}),
      applies_when(float_axis("density", {0.01}, "fraction of elements kept by topk and randomk", 1e-9, 1), "codec",
                   {"topk", "randomk"}),
      applies_when(int_axis("rank", {4}, "PowerSGD rank", 1, 65536), "codec", {"powersgd"}),
      applies_when(int_axis("error_feedback", {1}, "1: topk, randomk and powersgd keep the residual between steps", 0, 1),
                   "codec", {"topk", "randomk", "powersgd"}),
      threads_axis(),
  };
}

Axis threads_axis() { return int_axis("threads", {1}, "codec threads (chunked codecs: exponent, zstd, lz4)", 1, 256); }

Axis link_axis() {
  return float_axis("link_gbps", {0.0}, "modelled link bandwidth in GB/s (0 = no model; 100 Gbit/s = 12.5)", 0, 1e6);
}

std::vector<Metric> family_metrics(std::initializer_list<std::string_view> names) {
  static const std::vector<Metric> vocabulary = {
      {"time_ms", "ms", Better::Lower, "the benchmark's timed operation (see its description)"},
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
      {"baseline_time_ms", "ms", Better::Lower, "the uncompressed native collective, same sample"},
      {"baseline_model_time_ms", "ms", Better::Lower, "link model: uncompressed wire bytes / link"},
      {"speedup", "ratio", Better::Higher, "baseline time / time"},
      {"algbw_gbps", "GB/s", Better::Higher, "nccl-tests algbw (size / time)"},
      {"busbw_gbps", "GB/s", Better::Higher, "nccl-tests busbw (algbw * collective factor)"},
      {"compress_ms", "ms", Better::Lower, "time in compress (max over ranks)"},
      {"compress_host_ms", "ms", Better::Lower,
       "cuda: the compress call's time beyond its kernels (allocation, host-side code table, synchronisation)"},
      {"decompress_host_ms", "ms", Better::Lower, "cuda: the decompress call's time beyond its kernels"},
      {"decompress_ms", "ms", Better::Lower, "time in decompress and reduction (max over ranks)"},
      {"wire_bytes", "bytes", Better::Lower, "bytes this rank sends under a ring schedule"},
      {"wire_ratio", "ratio", Better::Higher, "uncompressed wire bytes / wire bytes"},
      {"predicted_ms", "ms", Better::Lower, "the planner's predicted time"},
  };
  return select_metrics(vocabulary, names);
}

RunnerDefaults family_runner() {
  return {.warmup = 1, .min_samples = 5, .max_samples = 50, .min_time_s = 0.2, .max_noise = 0.05, .max_time_s = 10,
          .timeout_s = 600};
}

std::string input_memory_hint(const State& state) {
  if (state.get_string("tensor_file") != "none") return "";
  const double gib = static_cast<double>(state.get_int("elements")) *
                     static_cast<double>(dtype_size(generated_dtype(state))) / (1 << 30);
  return "the input alone is " + std::to_string(gib) + " GiB; codecs and collectives need a few times that";
}

}  // namespace mlsb::compress
