#include "workloads/moe_train/family.hpp"

#include <string>

#include "harness/alias.hpp"
#include "harness/axes.hpp"
#include "workloads/moe_train/config.hpp"
#include "workloads/moe_train/precision/recipe.hpp"

namespace mlsb::moe_train {

MLSB_REGISTER_ALIAS(({"moe_train",
                      "mode",
                      "layer",
                      {{"layer", "moe_train.layer"}, {"lm", "moe_train.lm"}, {"plan", "moe_train.plan"}}}));

std::vector<Axis> layer_shape_axes() {
  return {
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
                  "custom: topk_softmax (Megatron default), softmax_topk, sigmoid (DeepSeek-V3, expert bias)",
                  {"topk_softmax", "softmax_topk", "sigmoid"}),
      int_axis("groups", {1}, "custom: expert groups for group-limited top-k (1: none)", 1, 65536),
      int_axis("group_topk", {1}, "custom: groups a token may route to (ignored when groups = 1)", 1, 65536),
      float_axis("capacity_factor", {0.0}, "capacity = ceil(tokens*k/E*cf); 0 = dropless", 0, 1e6),
      string_axis("drop_policy", {"probs"}, "over capacity keep the highest weights or the first tokens",
                  {"probs", "position"}),
      float_axis("aux_coef", {1e-2}, "load-balancing loss coefficient", 0, 1e3),
      float_axis("z_coef", {1e-3}, "router z-loss coefficient", 0, 1e3),
      float_axis("bias_rate", {1e-3}, "sigmoid router: expert-bias update rate", 0, 1e3),
  };
}

std::vector<Axis> precision_axes(std::initializer_list<precision::LayerType> stored) {
  std::vector<std::string> narrow;  // the 8- and 4-bit recipes
  for (const auto& name : precision::recipe_names())
    if (precision::narrow(precision::parse_recipe(name))) narrow.push_back(name);
  std::vector<Axis> axes = {
      string_axis("precision", {"fp32"},
                  "training recipe of the linear layers' GEMMs: fp32, bf16, fp8-delayed, fp8-current (HYBRID e4m3/e5m2, "
                  "per tensor), fp8-blockwise (DeepSeek-V3 1x128 / 128x128), mxfp8, nvfp4 (precision/recipe.hpp); emulated on "
                  "cpu, on cuda fp8-current/fp8-delayed in FP8 through cuBLASLt and fp32/bf16 as the bf16 layer",
                  precision::recipe_names()),
      applies_when(string_axis("accumulate", {"fp32"},
                               "GEMM accumulator of fp8/fp4 recipes: fp32, limited (14 significant bits, Hopper FP8 as "
                               "DeepSeek-V3 reports), promoted (limited, added into fp32 every 128 elements); on cuda limited is "
                               "cuBLASLt's fast accumulation, promoted its default",
                               precision::accumulate_names()),
                   "precision", narrow),
      applies_when(int_axis("amax_history", {1024}, "fp8-delayed: steps of amax history per tensor", 1, 1 << 20),
                   "precision", {"fp8-delayed"}),
      string_axis("activation_storage", {"full"},
                  "activations saved for backward, stored as AGoQ does: full (fp32), int8 or int4 with an fp32 scale "
                  "per 32 elements of a row, or layer_aware: each layer type as its <type>_storage says (defaults ours, "
                  "not AGoQ's allocation; precision/activation_store.hpp)",
                  precision::activation_storage_names()),
      applies_when(int_axis("bf16_blocks", {-1},
                            "the last blocks whose linear layers stay in bf16 (-1: the recipe's own: nvfp4 keeps 15% of "
                            "the blocks, rounded down; the others none)",
                            -1, 1 << 16),
                   "precision", narrow),
  };
  constexpr const char* kReads[precision::kLayerTypes] = {
      "the RMSNorms' inputs (the residual stream)", "attention's input, q|k|v and context",
      "the MoE layer's input, expert inputs, fc1 and SwiGLU outputs, expert outputs"};
  for (const precision::LayerType type : stored) {
    const int t = static_cast<int>(type);
    axes.push_back(applies_when(
        string_axis(precision::storage_axis(type),
                    {precision::layer_storage_names()[static_cast<size_t>(precision::kDefaultLayerStorage[t])]},
                    std::string("layer_aware: storage of ") + kReads[t], precision::layer_storage_names()),
        "activation_storage", {"layer_aware"}));
  }
  return axes;
}

std::vector<Axis> training_axes() {
  return {
      int_axis("threads", {1}, "cpu: OpenBLAS and element-wise threads", 1, 1024),
      float_axis("lr", {3e-3}, "AdamW learning rate", 0, 1e30),
  };
}

std::vector<Metric> family_metrics(std::initializer_list<std::string_view> names) {
  static const std::vector<Metric> vocabulary = {
      {"step_ms", "ms", Better::Lower, "one training step: forward + backward (+ AdamW)"},
      {"forward_ms", "ms", Better::Lower, "forward (max over ranks)"},
      {"backward_ms", "ms", Better::Lower, "backward (max over ranks)"},
      {"fwd_bwd_ms", "ms", Better::Lower, "forward + backward (max over ranks)"},
      {"optimizer_ms", "ms", Better::Lower, "AdamW step and expert-bias update"},
      {"comm_ms", "ms", Better::Lower,
       "communication wall time: while an all-to-all(v) is in flight (from its start to its completion, overlapped "
       "or not) or a communication call (gradient allreduce included) runs; their union, at most step_ms (max over "
       "ranks)"},
      {"compute_ms", "ms", Better::Lower, "the step on the host clock - exposed_comm_ms: the step's compute-only time (step_ms on the CPU)"},
      {"exposed_comm_ms", "ms", Better::Lower,
       "step time minus its compute-only time: time inside communication calls, waiting (max over ranks)"},
      {"overlap_efficiency", "ratio", Better::Higher,
       "communication hidden behind compute: each rank's 1 - exposed / comm, the lowest over ranks (0 with "
       "overlap=none)"},
      {"tokens_per_s", "tokens/s", Better::Higher, "tokens of all ranks per second of step"},
      {"model_tflops", "TFLOP/s", Better::Higher, "Megatron's model FLOPs (fwd + bwd) per second of fwd + bwd"},
      {"mfu", "ratio", Better::Higher, "model_tflops / (peak_tflops * ranks)"},
      {"peak_tflops", "TFLOP/s", Better::Higher,
       "per-device peak: GPU datasheet bf16 (fp8 under fp8-current/fp8-delayed on cuda), or the CPU sgemm peak measured "
       "at the case's GEMM shapes"},
      {"expert_gemm_tflops", "TFLOP/s", Better::Higher, "rate of the expert GEMMs alone (rank 0)"},
      {"expert_gemm_peak_ratio", "ratio", Better::Higher, "expert_gemm_tflops / peak_tflops"},
      {"peak_memory_mb", "MB", Better::Lower,
       "peak resident memory (cpu) or device allocation (cuda), rank 0; with a precision recipe, its fp32 twin included"},
      {"load_imbalance", "ratio", Better::Lower, "max / mean tokens per expert after capacity, all ranks"},
      {"dropped_fraction", "ratio", Better::Lower, "assignments dropped by capacity, all ranks"},
      {"aux_loss", "loss", Better::Lower, "load-balancing loss (mean over ranks)"},
      {"z_loss", "loss", Better::Lower, "router z-loss (mean over ranks)"},
      {"objective", "loss", Better::Lower,
       "<y, dy> / tokens + aux + z before the step (what AdamW lowers; a check, not a speed)"},
      {"predicted_ms", "ms", Better::Lower, "the planner's predicted step (forward + backward) for its plan"},
      {"sequential_ms", "ms", Better::Lower,
       "forward + backward of the same layer in the sequential order (overlap=chunked with one chunk, the shared "
       "experts after the pipeline: nothing overlaps), measured in the same run"},
      {"predicted_sequential_ms", "ms", Better::Lower,
       "the planner's predicted step for the sequential order: one chunk, the shared experts after the pipeline"},
      {"prediction_error", "ratio", Better::Lower, "|predicted_ms - step_ms| / step_ms"},
      {"speedup", "ratio", Better::Higher, "sequential_ms / step_ms"},
      {"chunks", "count", Better::Lower, "the plan's chunk count"},
      {"initial_loss", "nats/byte", Better::Lower, "training loss of the first step (about ln 256 = 5.55 at init)"},
      {"final_loss", "nats/byte", Better::Lower, "mean training loss of the last 10 steps"},
      {"eval_loss", "nats/byte", Better::Lower, "loss on the held-out tenth of the corpus after training"},
      {"loss_gap", "nats/byte", Better::Lower,
       "final_loss - the fp32 reference's final_loss: the same model, data, initial weights and routing seed trained "
       "in fp32 in the same case (mean of the last 10 steps' gaps)"},
      {"loss_gap_max", "nats/byte", Better::Lower,
       "the largest gap to the fp32 reference along the curve: the largest mean of 10 consecutive steps' gaps (with "
       "fewer steps, the mean of all)"},
      {"loss_gap_rel", "ratio", Better::Lower,
       "loss_gap / the reference's final_loss (DeepSeek-V3 reports below 0.0025 for its FP8 recipe against BF16)"},
      {"eval_loss_gap", "nats/byte", Better::Lower, "eval_loss - the fp32 reference's eval_loss"},
      {"fprop_rel_err", "ratio", Better::Lower,
       "forward GEMMs of the quantised linear layers: ||quantised - fp32|| / ||fp32|| over their outputs, the fp32 "
       "GEMM on the same unquantised inputs (every 10th step)"},
      {"dgrad_rel_err", "ratio", Better::Lower, "the same for the input-gradient GEMMs"},
      {"wgrad_rel_err", "ratio", Better::Lower, "the same for the weight-gradient GEMMs"},
      {"input_underflow", "ratio", Better::Lower, "non-zero activations (GEMM inputs) quantised to 0"},
      {"weight_underflow", "ratio", Better::Lower, "non-zero weights quantised to 0"},
      {"grad_underflow", "ratio", Better::Lower, "non-zero output gradients quantised to 0"},
      {"saturated_fraction", "ratio", Better::Lower,
       "GEMM operands that, once scaled, round beyond their format's max (clamped to it), all roles"},
      {"activation_mb", "MB", Better::Lower,
       "per step (10^6 bytes), what the recipe's formats store of the activations its quantised GEMMs read "
       "(elements and scales; once per GEMM that reads them)"},
      {"weight_mb", "MB", Better::Lower, "the same for the weights"},
      {"gradient_mb", "MB", Better::Lower, "the same for the output gradients"},
      {"saved_activation_mb", "MB", Better::Lower,
       "per step, the activations saved for backward as stored (quantised ones at their width with their scales, the "
       "others at fp32)"},
      {"saved_activation_ratio", "ratio", Better::Lower, "saved_activation_mb over the same activations at fp32"},
      {"saved_activation_bits", "bits", Better::Lower,
       "mean width of the quantisable saved activations' elements, scales excluded (AGoQ's \"near 4-bit\" counts "
       "this): 8 for int8, 4 for int4, under layer_aware the mean over the types, a full type's elements at 32"},
      {"reference_step_ms", "ms", Better::Lower, "the fp32 reference's step in the same case (its lockstep twin)"},
      {"emulation_overhead", "ratio", Better::Lower,
       "step_ms / reference_step_ms: what emulating the recipe's quantisation on the CPU costs (checks left out)"},
  };
  return select_metrics(vocabulary, names);
}

}  // namespace mlsb::moe_train
