// moe_train.layer: one MoE layer's training step on synthetic tokens. Each sample is one step on the same
// tokens: forward, backward of <y, dy> + aux + z, AdamW (optimizer=1) and the expert-bias update.
#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <optional>
#include <set>
#include <string>

#include "backends/comm/communicator.hpp"
#include "backends/cpu/gemm.hpp"
#include "backends/cuda/device.hpp"
#include "harness/axes.hpp"
#include "harness/registry.hpp"
#include "util/clock.hpp"
#include "util/peak_memory.hpp"
#include "util/process_state.hpp"
#include "workloads/moe_train/case_config.hpp"
#include "workloads/moe_train/cpu_peak.hpp"
#include "workloads/moe_train/family.hpp"
#include "workloads/moe_train/flops.hpp"
#include "workloads/moe_train/gpu_layer.hpp"
#include "workloads/moe_train/layer_check.hpp"
#include "workloads/moe_train/moe_layer.hpp"
#include "workloads/moe_train/overlap_check.hpp"
#include "workloads/moe_train/precision_metrics.hpp"

namespace mlsb::moe_train {
namespace {

// Step-level numbers every backend reports, before they are agreed across ranks.
struct StepNumbers {
  double forward_s = 0, backward_s = 0, optimizer_s = 0, gemm_s = 0, gemm_flop = 0;
  double wall_s = 0;  // the step on the host clock, which comm's exposed time is measured on
  CommTimes comm;
  double aux = 0, z = 0, objective = 0, peak_bytes = 0;
  std::vector<int64_t> rows_per_expert;  // after capacity, all ranks
  int64_t dropped = 0;
};

class LayerBench final : public Workload {
 public:
  WorkloadInfo info() const override {
    WorkloadInfo w;
    w.name = "moe_train.layer";
    w.description =
        "One MoE layer's training step (router, capacity, permute, all-to-all under expert parallelism, grouped-GEMM "
        "SwiGLU experts, combine, backward, AdamW) on CPU (OpenBLAS, fp32) or CUDA (cuBLAS, bf16; the experts in "
        "fp8 through cuBLASLt under fp8-current/fp8-delayed), with Megatron's FLOPs/MFU.";
    w.axes = layer_shape_axes();
    w.axes.push_back(data_axis(int_axis("tokens", {2048}, "tokens per step per rank", 1, 1LL << 31)));
    w.axes.push_back(data_axis(string_axis(
        "dtype", {"auto"}, "activations and weights: fp32 (cpu), bf16 (cuda; fp32 master weights), auto = the backend's",
        {"auto", "fp32", "bf16"})));
    w.axes.push_back(int_axis("optimizer", {1}, "1 = the step includes AdamW, 0 = forward + backward only", 0, 1));
    w.axes.push_back(
        string_axis("overlap", {"none"},
                    "expert parallelism: none = one all-to-all at a time; chunked = dispatch of chunk i+1 and "
                    "combine of chunk i-1 in flight while the experts compute chunk i (bit-identical)",
                    {"none", "chunked"}));
    w.axes.push_back(applies_when(int_axis("chunks", {1}, "overlap=chunked: chunks each rank's routed rows are cut into",
                                           1, static_cast<double>(kMaxChunks)),
                                  "overlap", {"chunked"}));
    const double last_wait = static_cast<double>(pipeline_waits(kMaxChunks) - 1);
    w.axes.push_back(applies_when(
        int_axis("shared_slot_fwd", {-1},
                 "overlap=chunked: the shared experts' forward runs before the pipeline's wait N (waits: "
                 "dispatch 0, then per step i dispatch i and combine i-1, then the last combine: 2*chunks); "
                 "-1 = after the pipeline",
                 -1, last_wait),
        "overlap", {"chunked"}));
    w.axes.push_back(applies_when(
        int_axis("shared_slot_bwd", {-1}, "overlap=chunked: as shared_slot_fwd, in the backward", -1, last_wait),
        "overlap", {"chunked"}));
    w.axes.push_back(float_axis("link_gbps", {0.0},
                                "modelled link for the all-to-alls, GB/s per rank: each completes no earlier than "
                                "bytes / bandwidth + latency per message after its start; 0 = the real transport alone",
                                0, 1e6));
    w.axes.push_back(float_axis("link_latency_us", {0.0}, "modelled link: latency per message, microseconds", 0, 1e9));
    for (auto& a : training_axes()) w.axes.push_back(std::move(a));
    for (auto& a : precision_axes({precision::LayerType::Moe})) w.axes.push_back(std::move(a));
    w.metrics = family_metrics({"step_ms", "forward_ms", "backward_ms", "fwd_bwd_ms", "optimizer_ms", "comm_ms",
                                "compute_ms", "exposed_comm_ms", "overlap_efficiency", "tokens_per_s",
                                "model_tflops", "mfu", "peak_tflops", "expert_gemm_tflops", "expert_gemm_peak_ratio",
                                "peak_memory_mb", "load_imbalance", "dropped_fraction", "aux_loss", "z_loss",
                                "objective", "fprop_rel_err", "dgrad_rel_err", "wgrad_rel_err", "input_underflow",
                                "weight_underflow", "grad_underflow", "saturated_fraction", "activation_mb",
                                "weight_mb", "gradient_mb", "saved_activation_mb", "saved_activation_ratio",
                                "saved_activation_bits", "reference_step_ms", "emulation_overhead"});
    w.primary_metric = "step_ms";
    w.examples = {
        "run moe_train.layer -p experts=8,16,32,64",
        "run moe_train.layer -p capacity_factor=1,1.25 -p drop_policy=probs,position",
        "run moe_train.layer -p preset=mixtral-8x7b,deepseek-v3 -p scale=16",
        "run moe_train.layer -p overlap=none,chunked -p chunks=4 -p link_gbps=1",
        "run moe_train.layer -p precision=fp32,fp8-current,fp8-blockwise,mxfp8,nvfp4",
    };
    w.runner = {.warmup = kLayerWarmupSteps,
                .min_samples = 5,
                .max_samples = 50,
                .min_time_s = 0.5,
                .max_noise = 0.03,
                .max_time_s = 20,
                .timeout_s = 1200};
    w.backends = {"cpu", "cuda"};
    return w;
  }
  std::string memory_hint(const State&) const override { return std::string(kMemoryHint); }

  void setup(State& state) override {
    if (state.backend() == "cpu" && state.get_string("dtype") == "bf16")
      state.skip("dtype: bf16 runs on the cuda backend; the cpu path is fp32");
    if (state.backend() == "cuda" && state.get_string("dtype") == "fp32")
      state.skip("dtype: the cuda path is bf16 (fp32 master weights); use -p dtype=bf16");
    // The GPU layer's rows travel on the case's communicator (nccl: device buffers); everything else here
    // (metrics, checks) goes over its host side.
    wire_ = state.backend() == "cuda" ? &state.comm() : &cpu_comm(state);
    comm_ = &wire_->host_side();
    const int ranks = comm_->size();
    config_ = layer_config(state, ranks);
    if (state.backend() == "cuda") {
      try {
        gpu_precision_ = precision_config(state);
      } catch (const std::invalid_argument& e) {
        state.skip(e.what());
      }
      if (const std::string why = gpu_precision_unsupported(gpu_precision_, config_); !why.empty()) state.skip(why);
    }
    try {
      ep_.overlap = parse_overlap(state.get_string("overlap"));
      ep_.chunks = state.get_int("chunks");
      ep_.shared_slot = {state.get_int("shared_slot_fwd"), state.get_int("shared_slot_bwd")};
      ep_.link = comm::make_link_model(state.get_float("link_gbps"), state.get_float("link_latency_us"));
      validate(ep_);
    } catch (const std::invalid_argument& e) {
      state.skip(e.what());
    }
    const bool overlapped = ep_.overlap == Overlap::Chunked || ep_.link.active();
    if (ranks == 1 && overlapped)
      state.warn("one rank: nothing is communicated, so overlap and link_gbps change nothing (run under mpirun)");
    tokens_ = state.get_int("tokens");
    threads_ = static_cast<int>(state.get_int("threads"));
    optimizer_ = state.get_int("optimizer") != 0;
    lr_ = state.get_float("lr");
    LayerInputs in = layer_inputs(state.seed(), comm_->rank(), tokens_, config_.hidden);
    x_ = std::move(in.x), dy_ = std::move(in.dy);
    if (state.backend() == "cuda") {
      std::string failed;
      try {
        gpu_ = make_gpu_layer(config_, tokens_, state.seed(), optimizer_config(state), ranks > 1 ? wire_ : nullptr, ep_,
                              gpu_precision_);
      } catch (const std::runtime_error& e) {
        failed = e.what();
      }
      // Every rank learns whether all have their GPU layer before a collective that needs one: one rank's
      // failure skips the case on every rank instead of leaving the others waiting for it.
      state.skip_unless_every_rank(failed.empty() ? "" : "backend cuda: " + failed);
      const auto names = cuda::device_names();
      const size_t device = static_cast<size_t>(gpu_->device());
      const std::string name = device < names.size() ? names[device] : "?";
      const auto spec = cuda::lookup_device(name);
      if (spec)
        peak_tflops_ = gpu_fp8(gpu_precision_.recipe) ? spec->peak_fp8_tflops : spec->peak_bf16_tflops;
      else if (cuda::is_mig_slice(name))
        state.warn("GPU '" + name + "' is a MIG slice, with a share of the GPU's peak: no mfu");
      else
        state.warn("GPU '" + name + "' is not in the peak table: no mfu");
      gpus_ = ranks > 1 ? gpus_in_use(gpu_->device()) : 1;
      if (gpus_ < ranks)
        state.warn(std::to_string(ranks) + " ranks share " + std::to_string(gpus_) +
                   " GPU(s): mfu is of the GPUs in use");
      gpu_->set_input(x_, dy_);
      return;
    }
    cpu::set_blas_threads(threads_);
    cpu_peak_ = CpuPeak(threads_, expert_gemm_shapes(config_, tokens_, ranks), state.counting());
    peak_tflops_ = cpu_peak_.tflops();
    reset_peak_rss();
    layer_ = std::make_unique<MoeLayer<float>>(config_, ranks > 1 ? comm_ : nullptr, threads_, ep_);
    layer_->init(state.seed());
    optim_ = trained_by_adamw(state, *layer_);
    try {
      precision_.emplace(precision_config(state), 1);
    } catch (const std::invalid_argument& e) {
      state.skip(e.what());
    }
    using precision::Site;
    layer_->set_precision({precision_->site(0, Site::ExpertFc1), precision_->site(0, Site::ExpertFc2)},
                          {precision_->site(0, Site::SharedFc1), precision_->site(0, Site::SharedFc2)});
    store_.emplace(precision_->config().activation_storage, precision_->config().layer_storage);
    // The fp32 twin of a recipe or a quantised storage, stepped beside it: the reference of its step time.
    if (precision_->config().emulated()) {
      ref_ = std::make_unique<MoeLayer<float>>(config_, ranks > 1 ? comm_ : nullptr, threads_, ep_);
      ref_->init(state.seed());
      ref_optim_ = trained_by_adamw(state, *ref_);
    }
    y_.resize(x_.size());
    dx_.resize(x_.size());
  }

  void sample(State& state) override {
    const StepNumbers n = gpu_ ? gpu_step() : cpu_step();
    // Agreed over ranks before it is judged, so every rank fails together instead of one rank failing
    // while the others wait for it in the collectives below.
    const double objective = mean_over_ranks(n.objective);
    if (!std::isfinite(objective))
      state.fail("the objective diverged (non-finite after " + std::to_string(steps_) + " steps): lower lr");
    if (steps_ == 0) first_objective_ = objective;
    last_objective_ = objective;
    ++steps_;
    const double fwd = comm_->max_over_ranks(n.forward_s), bwd = comm_->max_over_ranks(n.backward_s);
    const double fb = comm_->max_over_ranks(n.forward_s + n.backward_s);
    const double step = comm_->max_over_ranks(n.forward_s + n.backward_s + n.optimizer_s);
    const double comm_s = comm_->max_over_ranks(n.comm.comm_s), exposed = comm_->max_over_ranks(n.comm.blocked_s);
    const double ranks = comm_->size();
    state.record("step_ms", step * 1e3);
    state.record("forward_ms", fwd * 1e3);
    state.record("backward_ms", bwd * 1e3);
    state.record("fwd_bwd_ms", fb * 1e3);
    if (optimizer_) state.record("optimizer_ms", comm_->max_over_ranks(n.optimizer_s) * 1e3);
    if (ranks > 1) {
      state.record("comm_ms", comm_s * 1e3);
      state.record("exposed_comm_ms", exposed * 1e3);
      state.record("compute_ms", (comm_->max_over_ranks(n.wall_s) - exposed) * 1e3);
      // Each rank's own hidden share, then the lowest: comm_ms and exposed_comm_ms may come from different ranks.
      const double own = n.comm.comm_s > 0 ? std::clamp(1 - n.comm.blocked_s / n.comm.comm_s, 0.0, 1.0) : 0.0;
      state.record("overlap_efficiency", -comm_->max_over_ranks(-own));
    }
    state.record("tokens_per_s", ranks * static_cast<double>(tokens_) / step);
    const double tflops = moe_layer_flop(config_, tokens_) * ranks / fb / 1e12;
    const double gemm_tflops = n.gemm_s > 0 ? n.gemm_flop / n.gemm_s / 1e12 : 0;
    if (!gpu_) peak_tflops_ = cpu_peak_.cover(std::max(gemm_tflops, tflops / ranks));
    state.record("model_tflops", tflops);
    if (peak_tflops_ > 0) {
      state.record("peak_tflops", peak_tflops_);
      state.record("mfu", tflops / (peak_tflops_ * (gpu_ ? gpus_ : ranks)));
    }
    if (n.gemm_s > 0) {
      state.record("expert_gemm_tflops", gemm_tflops);
      if (peak_tflops_ > 0) state.record("expert_gemm_peak_ratio", gemm_tflops / peak_tflops_);
    }
    state.record("peak_memory_mb", n.peak_bytes / 1e6);
    state.record("load_imbalance", load_imbalance(n.rows_per_expert));
    if (state.sample_index() == 0) add_expert_load(state, n.rows_per_expert, "first measured step, all ranks");
    const double dropped = comm_->size() > 1 ? sum_over_ranks(n.dropped) : static_cast<double>(n.dropped);
    state.record("dropped_fraction", dropped / (ranks * static_cast<double>(tokens_ * config_.topk)));
    state.record("aux_loss", mean_over_ranks(n.aux));
    state.record("z_loss", mean_over_ranks(n.z));
    state.record("objective", objective);
    if (ref_) {
      const double ref_step = comm_->max_over_ranks(ref_step_s_);
      state.record("reference_step_ms", ref_step * 1e3);
      state.record("emulation_overhead", step / ref_step);
    }
    if (precision_) {
      record_precision(state, *precision_, *store_, steps_);
    }
  }

  void verify(State& state) override {
    verify_peak_fractions(state);
    if (precision_) add_site_items(state, *precision_);  // once, with every step's numbers
    if (gpu_) {  // the GPU layer's oracle is the CPU layer (tests/gpu); its counts are the CPU plan's
      if (comm_->size() > 1 && ep_.overlap == Overlap::Chunked) {
        gpu_.reset();  // the check makes two layers of its own (ranks may share a GPU)
        const std::string same =
            check_gpu_overlap_identical(config_, *wire_, ep_, state.seed(), optimizer_config(state), x_, dy_, tokens_,
                                        gpu_precision_);
        if (!same.empty()) state.fail(same);
      }
      return;
    }
    const std::string load = check_load_statistics(layer_->routing(), layer_->plan(), config_);
    if (!load.empty()) state.fail("load statistics: " + load);
    // A fresh layer with the initial weights: its outputs against a per-token double-precision reference.
    MoeLayer<float> fresh(config_, comm_->size() > 1 ? comm_ : nullptr, threads_);
    fresh.init(state.seed());
    fresh.forward(x_.data(), tokens_, y_.data());
    const std::string out = check_layer_output(fresh, x_.data(), y_.data(), state.seed());
    if (!out.empty()) state.fail("forward output: " + out);
    if (comm_->size() > 1 && ep_.overlap == Overlap::Chunked) {
      const std::string same =
          check_overlap_identical(config_, *comm_, threads_, ep_, state.seed(), x_.data(), dy_.data(), tokens_);
      if (!same.empty()) state.fail(same);
    }
    if (optimizer_ && lr_ > 0 && steps_ >= 3 && !(last_objective_ < first_objective_))
      state.fail("AdamW did not decrease the objective: " + std::to_string(first_objective_) + " -> " +
                 std::to_string(last_objective_));
  }

 private:
  double sum_over_ranks(double v) {
    double s = v;
    comm_->allreduce(&s, &s, 1, comm::ElemType::F64, comm::ReduceOp::Sum);
    return s;
  }
  double mean_over_ranks(double v) { return comm_->size() > 1 ? sum_over_ranks(v) / comm_->size() : v; }
  // How many distinct GPUs the ranks run on (ranks of one node may share one): each rank's host name and its
  // device's PCI bus id, hashed and gathered.
  int gpus_in_use(int device) {
    const int64_t id = static_cast<int64_t>(std::hash<std::string>{}(host_name() + "/" + cuda::pci_bus_id(device)));
    std::vector<int64_t> all(static_cast<size_t>(comm_->size()));
    comm_->allgather(&id, all.data(), 1, comm::ElemType::I64);
    return static_cast<int>(std::set<int64_t>(all.begin(), all.end()).size());
  }

  // AdamW over the layer's parameters.
  static std::unique_ptr<AdamW<float>> trained_by_adamw(const State& state, MoeLayer<float>& layer) {
    auto optim = std::make_unique<AdamW<float>>(optimizer_config(state));
    auto& p = layer.params();
    auto& g = layer.grads();
    optim->add(p.router, g.router);
    optim->add(p.experts.w13, g.experts.w13);
    optim->add(p.experts.w2, g.experts.w2);
    if (p.shared.experts) optim->add(p.shared.w13, g.shared.w13), optim->add(p.shared.w2, g.shared.w2);
    return optim;
  }

  // One step of `layer` (forward, backward, AdamW when the case has it); seconds of each, less the recipe's checks.
  // With `store`, the activations the forward saved are stored as it says (the input x is the caller's, not counted).
  void step_layer(MoeLayer<float>& layer, AdamW<float>& optim, StepNumbers& n,
                  precision::ActivationStore* store = nullptr) {
    layer.zero_grad();
    layer.times() = {};
    double checks = precision_->check_seconds();
    auto t0 = Clock::now();
    layer.forward(x_.data(), tokens_, y_.data());
    if (store) layer.store_activations(*store);
    n.forward_s = seconds_since(t0) - (precision_->check_seconds() - checks);
    checks = precision_->check_seconds();
    t0 = Clock::now();
    layer.backward(dy_.data(), dx_.data());
    n.backward_s = seconds_since(t0) - (precision_->check_seconds() - checks);
    if (optimizer_) {
      t0 = Clock::now();
      optim.step(threads_);
      layer.update_bias();
      n.optimizer_s = seconds_since(t0);
    }
  }

  StepNumbers cpu_step() {
    StepNumbers n;
    if (ref_) {
      StepNumbers r;
      step_layer(*ref_, *ref_optim_, r);
      ref_step_s_ = r.forward_s + r.backward_s + r.optimizer_s;
    }
    precision_->begin_step(true);
    step_layer(*layer_, *optim_, n, &*store_);
    precision_->end_step();
    n.objective = std::inner_product(y_.begin(), y_.end(), dy_.begin(), 0.0) + layer_->aux_loss() + layer_->z_loss();
    n.aux = layer_->aux_loss(), n.z = layer_->z_loss();
    n.wall_s = n.forward_s + n.backward_s + n.optimizer_s;  // host clock throughout on the CPU
    n.comm = layer_->times().comm;
    n.gemm_s = layer_->times().experts.seconds, n.gemm_flop = layer_->times().experts.flop;
    n.peak_bytes = peak_rss_bytes();
    n.rows_per_expert = layer_->plan().tokens_per_expert();
    if (comm_->size() > 1)
      comm_->allreduce(n.rows_per_expert.data(), n.rows_per_expert.data(), n.rows_per_expert.size(),
                       comm::ElemType::I64, comm::ReduceOp::Sum);
    n.dropped = layer_->plan().dropped;
    return n;
  }

  StepNumbers gpu_step() {
    const GpuStepResult r = gpu_->step();
    StepNumbers n;
    n.forward_s = r.forward_ms / 1e3, n.backward_s = r.backward_ms / 1e3;
    n.optimizer_s = optimizer_ ? r.optimizer_ms / 1e3 : 0;
    n.wall_s = r.wall_ms / 1e3;
    n.aux = r.aux_loss, n.z = r.z_loss, n.objective = r.objective, n.peak_bytes = r.peak_memory_bytes;
    n.rows_per_expert = r.tokens_per_expert, n.dropped = r.dropped, n.comm = r.comm;
    if (comm_->size() > 1)
      comm_->allreduce(n.rows_per_expert.data(), n.rows_per_expert.data(), n.rows_per_expert.size(),
                       comm::ElemType::I64, comm::ReduceOp::Sum);
    return n;
  }

  comm::Communicator* wire_ = nullptr;  // the case's communicator: the layer's rows
  comm::Communicator* comm_ = nullptr;  // its host side: counts, times, checks
  MoeConfig config_;
  EpOptions ep_;
  int64_t tokens_ = 0;
  int threads_ = 1;
  bool optimizer_ = true;
  double lr_ = 0;
  CpuPeak cpu_peak_;
  double peak_tflops_ = 0;  // the CPU peak (cpu_peak_) or the GPU datasheet bf16 (fp8 under an fp8 recipe) peak
  precision::PrecisionConfig gpu_precision_;  // cuda: what the GPU layer runs
  int gpus_ = 1;            // cuda: the distinct GPUs the ranks run on
  std::vector<float> x_, dy_, y_, dx_;
  std::optional<precision::Precision> precision_;     // the recipe's sites (none for fp32), before the layer holding them
  std::unique_ptr<MoeLayer<float>> layer_;
  std::unique_ptr<AdamW<float>> optim_;
  std::optional<precision::ActivationStore> store_;   // what the layer saves for backward, all steps
  std::unique_ptr<MoeLayer<float>> ref_;              // a recipe's fp32 twin
  std::unique_ptr<AdamW<float>> ref_optim_;
  double ref_step_s_ = 0;
  std::unique_ptr<GpuMoeLayer> gpu_;
  double first_objective_ = 0, last_objective_ = 0;
  int64_t steps_ = 0;
};

}  // namespace

MLSB_REGISTER_WORKLOAD(LayerBench);

}  // namespace mlsb::moe_train
