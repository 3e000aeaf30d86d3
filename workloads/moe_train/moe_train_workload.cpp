// The moe_train workload: MoE training steps (router, dispatch, grouped-GEMM experts, backward, AdamW)
// on the CPU and CUDA, with expert parallelism over MPI, and a small MoE LM trained on real text.
#include <new>

#include "harness/axes.hpp"
#include "harness/registry.hpp"
#include "workloads/moe_train/modes.hpp"

namespace mlsb::moe_train {
namespace {

class MoeTrainWorkload final : public Workload {
 public:
  WorkloadInfo info() const override {
    WorkloadInfo w;
    w.name = "moe_train";
    w.description =
        "One MoE layer's training step (router, capacity, permute, all-to-all under expert parallelism, grouped-GEMM "
        "SwiGLU experts, combine, backward, AdamW) on CPU (OpenBLAS, fp32) or CUDA (cuBLAS, bf16), with Megatron's "
        "FLOPs/MFU; or a small MoE decoder LM trained byte-level on real text (loss curve, routing traces).";
    w.axes = {
        data_axis(string_axis("mode", {"layer"},
                              "layer: one layer's training step; lm: train a small MoE LM on a corpus",
                              {"layer", "lm"})),
        data_axis(string_axis("preset", {"custom"},
                              "layer shape and routing of a published model (custom: the axes below)", preset_names())),
        data_axis(int_axis("scale", {1}, "a preset's hidden and ffn are divided by this", 1, 1 << 20)),
        data_axis(int_axis("hidden", {128}, "custom: model width h", 1, 1 << 20)),
        data_axis(int_axis("ffn", {256}, "custom: routed expert SwiGLU inner size f", 1, 1 << 22)),
        data_axis(int_axis("experts", {8}, "custom: routed experts E", 1, 65536)),
        int_axis("topk", {2}, "custom: experts per token k", 1, 65536),
        data_axis(int_axis("shared_experts", {0}, "custom: always-on shared experts", 0, 64)),
        data_axis(int_axis("shared_ffn", {0}, "custom: inner size of a shared expert (0: ffn)", 0, 1 << 22)),
        string_axis("router", {"topk_softmax"},
                    "custom: topk_softmax (Megatron default), softmax_topk, sigmoid "
                    "(DeepSeek-V3, expert bias)",
                    {"topk_softmax", "softmax_topk", "sigmoid"}),
        int_axis("groups", {1}, "custom: expert groups for group-limited top-k (1: none)", 1, 65536),
        int_axis("group_topk", {1}, "custom: groups a token may route to (ignored when groups = 1)", 1, 65536),
        float_axis("capacity_factor", {0.0}, "capacity = ceil(tokens*k/E*cf); 0 = dropless", 0, 1e6),
        string_axis("drop_policy", {"probs"}, "over capacity keep the highest weights or the first tokens",
                    {"probs", "position"}),
        float_axis("aux_coef", {1e-2}, "load-balancing loss coefficient", 0, 1e3),
        float_axis("z_coef", {1e-3}, "router z-loss coefficient", 0, 1e3),
        float_axis("bias_rate", {1e-3}, "sigmoid router: expert-bias update rate", 0, 1e3),
        data_axis(int_axis("tokens", {2048}, "layer: tokens per step per rank", 1, 1LL << 31)),
        data_axis(string_axis("dtype", {"auto"},
                              "activations and weights: fp32 (cpu), bf16 (cuda; fp32 master weights), "
                              "auto = the backend's",
                              {"auto", "fp32", "bf16"})),
        int_axis("threads", {1}, "cpu: OpenBLAS and element-wise threads", 1, 1024),
        int_axis("optimizer", {1}, "layer: 1 = the step includes AdamW, 0 = forward + backward only", 0, 1),
        float_axis("lr", {3e-3}, "AdamW learning rate", 0, 1e30),
        data_axis(int_axis("layers", {2}, "lm: transformer blocks (each attention + MoE FFN)", 1, 64)),
        data_axis(int_axis("heads", {4}, "lm: attention heads (hidden must divide by it)", 1, 1024)),
        data_axis(int_axis("seq", {64}, "lm: sequence length in bytes", 2, 1 << 16)),
        data_axis(int_axis("batch", {16}, "lm: sequences per step", 1, 1 << 16)),
        int_axis("steps", {300}, "lm: training steps", 1, 1 << 24),
        data_axis(path_axis("corpus", "system",
                            "lm: a text file or folder, or system (licence and copyright texts under "
                            "/usr/share)",
                            {"system"})),
        data_axis(float_axis("corpus_mb", {4.0}, "lm: at most this many MB of the corpus are read", 0.001, 1e5)),
        string_axis("trace_out", {"none"}, "lm: JSON-lines routing trace written here (none: no trace)"),
        int_axis("trace_every", {10}, "lm: trace every Nth step", 1, 1 << 24),
        int_axis("trace_eval", {0},
                 "lm: 1 = also trace the trained model on the held-out evaluation batches "
                 "(inference routing; recorded as step `steps`)",
                 0, 1),
    };
    w.metrics = {
        {"step_ms", "ms", Better::Lower, "one training step: forward + backward (+ AdamW); lm: mean step"},
        {"forward_ms", "ms", Better::Lower, "forward (max over ranks)"},
        {"backward_ms", "ms", Better::Lower, "backward (max over ranks)"},
        {"fwd_bwd_ms", "ms", Better::Lower, "forward + backward (max over ranks)"},
        {"optimizer_ms", "ms", Better::Lower, "AdamW step and expert-bias update"},
        {"comm_ms", "ms", Better::Lower, "all-to-all(v) and gradient allreduce (max over ranks)"},
        {"compute_ms", "ms", Better::Lower, "step_ms - comm_ms"},
        {"tokens_per_s", "tokens/s", Better::Higher, "tokens of all ranks per second of step"},
        {"model_tflops", "TFLOP/s", Better::Higher, "Megatron's model FLOPs (fwd + bwd) per second of fwd + bwd"},
        {"mfu", "ratio", Better::Higher, "model_tflops / (peak_tflops * ranks)"},
        {"peak_tflops", "TFLOP/s", Better::Higher, "per-device peak: GPU datasheet bf16, or a measured CPU sgemm"},
        {"expert_gemm_tflops", "TFLOP/s", Better::Higher, "rate of the expert GEMMs alone (rank 0)"},
        {"expert_gemm_peak_ratio", "ratio", Better::Higher, "expert_gemm_tflops / peak_tflops"},
        {"peak_memory_mb", "MB", Better::Lower, "peak resident memory (cpu) or device allocation (cuda), rank 0"},
        {"load_imbalance", "ratio", Better::Lower, "max / mean tokens per expert after capacity, all ranks"},
        {"dropped_fraction", "ratio", Better::Lower, "assignments dropped by capacity, all ranks"},
        {"aux_loss", "loss", Better::Lower, "load-balancing loss (mean over ranks; lm: last step, all layers)"},
        {"z_loss", "loss", Better::Lower, "router z-loss (mean over ranks; lm: last step, all layers)"},
        {"objective", "loss", Better::Lower, "layer: <y, dy> / tokens + aux + z before the step (what AdamW lowers; a check, not a speed)"},
        {"initial_loss", "nats/byte", Better::Lower, "lm: training loss of the first step (about ln 256 = 5.55 at init)"},
        {"final_loss", "nats/byte", Better::Lower, "lm: mean training loss of the last 10 steps"},
        {"eval_loss", "nats/byte", Better::Lower, "lm: loss on the held-out tenth of the corpus after training"},
    };
    w.primary_metric = "step_ms";
    w.examples = {
        "run moe_train -p experts=8,16,32,64",
        "run moe_train -p capacity_factor=1,1.25 -p drop_policy=probs,position",
        "run moe_train -p preset=mixtral-8x7b,deepseek-v3 -p scale=16",
        "run moe_train -p mode=lm -p steps=300 -p trace_out=routing.jsonl",
    };
    w.runner = {.warmup = 1, .min_samples = 5, .max_samples = 50, .min_time_s = 0.5, .max_noise = 0.03,
                .max_time_s = 20, .timeout_s = 1200};
    // One lm sample is a whole training run.
    w.runner_when = {{"mode", "lm", {.warmup = 0, .min_samples = 1, .max_samples = 1, .min_time_s = 0,
                                     .max_noise = 1, .max_time_s = 1e9, .timeout_s = 3600}}};
    w.backends = {"cpu", "cuda"};
    return w;
  }

  void setup(State& state) override {
    const bool lm = state.get_string("mode") == "lm";
    if (state.backend() == "cpu" && state.get_string("dtype") == "bf16")
      state.skip("dtype: bf16 runs on the cuda backend; the cpu path is fp32");
    if (state.backend() == "cuda" && state.get_string("dtype") == "fp32")
      state.skip("dtype: the cuda path is bf16 (fp32 master weights); use -p dtype=bf16");
    if (lm && state.backend() == "cuda") state.skip("mode lm runs on the cpu backend");
    bench_ = lm ? make_lm_bench() : make_layer_bench();
    guard(state, [&] { bench_->setup(state); });
  }
  void sample(State& state) override {
    guard(state, [&] { bench_->sample(state); });
  }
  void verify(State& state) override {
    guard(state, [&] { bench_->verify(state); });
  }
  void teardown(State&) override { bench_.reset(); }

 private:
  template <typename F>
  static void guard(State& state, F&& body) {
    try {
      body();
    } catch (const std::bad_alloc&) {
      state.fail("out of memory: the case's weights and activations do not fit in this machine's memory "
                 "(lower tokens, or a larger scale for a preset)");
    }
  }

  std::unique_ptr<ModeBench> bench_;
};

}  // namespace

MLSB_REGISTER_WORKLOAD(MoeTrainWorkload);

}  // namespace mlsb::moe_train
