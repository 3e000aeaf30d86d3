// moe_train.lm: trains the small MoE LM byte-level on a real text corpus. One sample is the whole run of
// `steps` steps; the loss curve and the last step's expert load are stored as items ("series/loss/<step>",
// "series/expert_load/<expert>", each with its "chart/..." item), the routing trace (optional)
// as JSON lines, and verify fails the case unless the loss fell well below its start. Under a low-precision recipe
// (-p precision) an fp32 twin trains in lockstep on the same batches from the same weights and seed: the loss gap
// ("series/loss_gap/<step>", its 10-step trailing mean) and the reference step time come from it.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>
#include <random>

#include "backends/comm/communicator.hpp"
#include "backends/cpu/gemm.hpp"
#include "harness/axes.hpp"
#include "util/clock.hpp"
#include "util/peak_memory.hpp"
#include "harness/registry.hpp"
#include "workloads/moe_train/corpus.hpp"
#include "workloads/moe_train/flops.hpp"
#include "workloads/moe_train/case_config.hpp"
#include "workloads/moe_train/cpu_peak.hpp"
#include "workloads/moe_train/family.hpp"
#include "workloads/moe_train/moe_lm.hpp"
#include "workloads/moe_train/precision_metrics.hpp"
#include "workloads/moe_train/routing_trace.hpp"

namespace mlsb::moe_train {
namespace {

double mean_of(const std::vector<double>& v, size_t begin, size_t end) {
  return std::accumulate(v.begin() + begin, v.begin() + end, 0.0) / static_cast<double>(end - begin);
}

class LmBench final : public Workload {
 public:
  WorkloadInfo info() const override {
    WorkloadInfo w;
    w.name = "moe_train.lm";
    w.description =
        "A small MoE decoder LM (attention + MoE FFN blocks) trained byte-level on real text on the CPU: the loss "
        "curve, held-out loss, routing statistics and optional routing traces (the input of moe_offload).";
    w.axes = layer_shape_axes();
    w.axes.insert(w.axes.end(), {
        data_axis(int_axis("layers", {2}, "transformer blocks (each attention + MoE FFN)", 1, 64)),
        data_axis(int_axis("heads", {4}, "attention heads (hidden must divide by it)", 1, 1024)),
        data_axis(int_axis("seq", {64}, "sequence length in bytes", 2, 1 << 16)),
        data_axis(int_axis("batch", {16}, "sequences per step", 1, 1 << 16)),
        int_axis("steps", {300}, "training steps", 1, 1 << 24),
        data_axis(path_axis("corpus", "system",
                            "a text file or folder, or system (licence and copyright texts under /usr/share)",
                            {"system"})),
        data_axis(float_axis("corpus_mb", {4.0}, "at most this many MB of the corpus are read", 0.001, 1e5)),
        string_axis("trace_out", {"none"}, "JSON-lines routing trace written here (none: no trace)"),
        int_axis("trace_every", {10}, "trace every Nth step", 1, 1 << 24),
        int_axis("trace_eval", {0},
                 "1 = also trace the trained model on the held-out evaluation batches (inference routing; recorded "
                 "as step `steps`)",
                 0, 1),
    });
    for (auto& a : training_axes()) w.axes.push_back(std::move(a));
    for (auto& a : precision_axes({precision::LayerType::Norm, precision::LayerType::Attention,
                                    precision::LayerType::Moe}))
      w.axes.push_back(std::move(a));
    w.metrics = family_metrics({"step_ms", "forward_ms", "backward_ms", "fwd_bwd_ms", "optimizer_ms", "tokens_per_s",
                                "model_tflops", "mfu", "peak_tflops", "expert_gemm_tflops", "expert_gemm_peak_ratio",
                                "peak_memory_mb", "load_imbalance", "dropped_fraction", "aux_loss", "z_loss",
                                "initial_loss", "final_loss", "eval_loss", "loss_gap", "loss_gap_max",
                                "loss_gap_rel", "eval_loss_gap", "fprop_rel_err", "dgrad_rel_err", "wgrad_rel_err",
                                "input_underflow", "weight_underflow", "grad_underflow", "saturated_fraction",
                                "activation_mb", "weight_mb", "gradient_mb", "saved_activation_mb",
                                "saved_activation_ratio", "saved_activation_bits", "reference_step_ms",
                                "emulation_overhead"});
    w.metrics[0].help = "mean training step: forward + backward + AdamW";
    for (auto& m : w.metrics)
      if (m.name == "aux_loss" || m.name == "z_loss") m.help += ": the last step's, all layers";
    w.primary_metric = "step_ms";
    w.examples = {
        "run moe_train.lm -p steps=300 -p trace_out=routing.jsonl",
        "run moe_train.lm -p experts=4,8,16 -p steps=200",
        "run moe_train.lm -p router=sigmoid -p trace_eval=1 -p trace_out=routing-eval.jsonl",
        "run moe_train.lm -p precision=fp32,bf16,fp8-delayed,fp8-current,fp8-blockwise,mxfp8,nvfp4",
        "run moe_train.lm -p precision=fp8-blockwise -p accumulate=fp32,limited,promoted",
    };
    // One sample is a whole training run.
    w.runner = {.warmup = 0, .min_samples = 1, .max_samples = 1, .min_time_s = 0, .max_noise = 1, .max_time_s = 1e9,
                .timeout_s = 3600};
    return w;
  }
  std::string memory_hint(const State&) const override { return std::string(kMemoryHint); }

  void setup(State& state) override {
    if (state.comm().size() > 1) state.skip("moe_train.lm runs on one rank (run it without mpirun)");
    cfg_.moe = layer_config(state, 1);
    cfg_.layers = state.get_int("layers"), cfg_.heads = state.get_int("heads"), cfg_.seq = state.get_int("seq");
    batch_ = state.get_int("batch"), steps_ = state.get_int("steps");
    threads_ = static_cast<int>(state.get_int("threads"));
    const std::string where = state.get_string("corpus") == "system" ? "system" : input_path(state, "corpus").string();
    try {
      corpus_ = load_corpus(where, static_cast<int64_t>(state.get_float("corpus_mb") * 1e6), 20 * (cfg_.seq + 1));
      lm_.emplace(cfg_, threads_);
      precision_.emplace(precision_config(state), cfg_.layers);
      lm_->set_precision(*precision_);
      store_.emplace(precision_->config().activation_storage, precision_->config().layer_storage);
      // Every recipe but fp32 (and every quantised activation storage) trains beside an fp32 twin of the same data,
      // weights and seed: the reference of its loss gap and of its step time.
      if (precision_->config().emulated()) ref_.emplace(cfg_, threads_);
    } catch (const std::invalid_argument& e) {
      state.skip(e.what());
    }
    split_ = corpus_.text.size() * 9 / 10;
    state.add_item("corpus", {{"source", corpus_.source}, {"files", corpus_.files}, {"bytes", corpus_.text.size()},
                              {"train_bytes", split_}, {"eval_bytes", corpus_.text.size() - split_}});
    cpu::set_blas_threads(threads_);
    peak_ = CpuPeak(threads_, expert_gemm_shapes(cfg_.moe, batch_ * cfg_.seq, 1), state.counting());
    const std::string trace = state.get_string("trace_out");
    if (trace != "none") {
      try {
        trace_.emplace(trace, cfg_.layers, cfg_.moe, cfg_.seq, corpus_.source);
      } catch (const std::runtime_error& e) {
        state.fail(e.what());
      }
      if (trace_->replaced()) state.warn("trace_out: replaced the earlier routing trace in " + trace);
      trace_every_ = state.get_int("trace_every");
      trace_eval_ = state.get_int("trace_eval") == 1;
    }
  }

  void sample(State& state) override {
    lm_->init(state.seed());
    AdamW<float> opt(optimizer_config(state));
    for (auto& [name, pg] : lm_->parameters()) opt.add(pg.first, pg.second);
    std::optional<AdamW<float>> ref_opt;
    if (ref_) {
      ref_->init(state.seed());
      ref_opt.emplace(optimizer_config(state));
      for (auto& [name, pg] : ref_->parameters()) ref_opt->add(pg.first, pg.second);
    }
    reset_peak_rss();
    std::mt19937_64 rng = state.rng(7);
    std::vector<uint8_t> batch(batch_ * (cfg_.seq + 1));
    losses_.clear(), gaps_.clear(), ref_losses_.clear();
    double fwd_s = 0, bwd_s = 0, opt_s = 0, ref_s = 0;
    GemmStats gemm;
    for (int64_t step = 0; step < steps_; ++step) {
      if (state.cancelled()) return;
      fill_batch(rng, 0, split_, batch);
      lm_->zero_grad();
      for (int64_t l = 0; l < cfg_.layers; ++l) lm_->moe(l).times() = {};
      precision_->begin_step(step % precision::kCheckEvery == 0);
      double checks = precision_->check_seconds();
      auto t0 = Clock::now();
      const double loss = lm_->forward(batch.data(), batch_);
      lm_->store_activations(*store_);
      fwd_s += seconds_since(t0) - (precision_->check_seconds() - checks);
      if (!std::isfinite(loss))
        state.fail("the loss diverged at step " + std::to_string(step) + " (" + std::to_string(loss) +
                   "): lower lr");
      checks = precision_->check_seconds();
      t0 = Clock::now();
      lm_->backward();
      bwd_s += seconds_since(t0) - (precision_->check_seconds() - checks);
      t0 = Clock::now();
      opt.step(threads_);
      for (int64_t l = 0; l < cfg_.layers; ++l) lm_->moe(l).update_bias();
      opt_s += seconds_since(t0);
      precision_->end_step();
      if (ref_) {
        ref_->zero_grad();
        t0 = Clock::now();
        const double ref_loss = ref_->forward(batch.data(), batch_);
        ref_->backward();
        ref_opt->step(threads_);
        for (int64_t l = 0; l < cfg_.layers; ++l) ref_->moe(l).update_bias();
        ref_s += seconds_since(t0);
        gaps_.push_back(loss - ref_loss);
        ref_losses_.push_back(ref_loss);
        const size_t n = gaps_.size();  // drawn as the trailing mean of up to 10 steps (loss_gap_max: 10 only)
        state.add_item("series/loss_gap/" + std::to_string(step),
                       {{"x", step}, {"y", mean_of(gaps_, n - std::min<size_t>(10, n), n)}});
      }
      double aux = 0, z = 0;
      for (int64_t l = 0; l < cfg_.layers; ++l) {
        aux += lm_->moe(l).aux_loss(), z += lm_->moe(l).z_loss();
        gemm.seconds += lm_->moe(l).times().experts.seconds, gemm.flop += lm_->moe(l).times().experts.flop;
      }
      losses_.push_back(loss);
      state.add_item("series/loss/" + std::to_string(step), {{"x", step}, {"y", loss}, {"aux_loss", aux},
                                                              {"z_loss", z}});
      if (trace_ && step % trace_every_ == 0)
        for (int64_t l = 0; l < cfg_.layers; ++l) trace_->write(step, l, lm_->moe(l).routing(), batch.data(), cfg_.seq);
      state.progress(step + 1, steps_);
      last_aux_ = aux, last_z_ = z;
    }
    const double n = static_cast<double>(steps_), tokens = static_cast<double>(batch_ * cfg_.seq);
    const double step_s = (fwd_s + bwd_s + opt_s) / n;
    state.record("step_ms", step_s * 1e3);
    state.record("forward_ms", fwd_s / n * 1e3);
    state.record("backward_ms", bwd_s / n * 1e3);
    state.record("fwd_bwd_ms", (fwd_s + bwd_s) / n * 1e3);
    state.record("optimizer_ms", opt_s / n * 1e3);
    state.record("tokens_per_s", tokens / step_s);
    const double flop = cfg_.layers * (moe_layer_flop(cfg_.moe, batch_ * cfg_.seq) +
                                       attention_flop(cfg_.moe.hidden, cfg_.seq, batch_ * cfg_.seq)) +
                        logits_flop(cfg_.moe.hidden, cfg_.vocab, batch_ * cfg_.seq);
    const double tflops = flop / ((fwd_s + bwd_s) / n) / 1e12;
    const double gemm_tflops = gemm.seconds > 0 ? gemm.flop / gemm.seconds / 1e12 : 0;
    const double peak = peak_.cover(std::max(tflops, gemm_tflops));
    state.record("model_tflops", tflops);
    state.record("peak_tflops", peak);
    state.record("mfu", tflops / peak);
    if (gemm.seconds > 0) {
      state.record("expert_gemm_tflops", gemm_tflops);
      state.record("expert_gemm_peak_ratio", gemm_tflops / peak);
    }
    state.record("peak_memory_mb", peak_rss_bytes() / 1e6);
    std::vector<int64_t> rows(cfg_.moe.experts, 0);
    int64_t dropped = 0;
    for (int64_t l = 0; l < cfg_.layers; ++l) {
      const auto r = lm_->moe(l).plan().tokens_per_expert();
      for (size_t e = 0; e < rows.size(); ++e) rows[e] += r[e];
      dropped += lm_->moe(l).plan().dropped;
    }
    state.record("load_imbalance", load_imbalance(rows));
    add_expert_load(state, rows, "last step, all layers");
    state.record("dropped_fraction", static_cast<double>(dropped) / (tokens * cfg_.moe.topk * cfg_.layers));
    state.record("aux_loss", last_aux_);
    state.record("z_loss", last_z_);
    const size_t w = std::min<size_t>(10, losses_.size());
    state.record("initial_loss", losses_.front());
    state.record("final_loss", mean_of(losses_, losses_.size() - w, losses_.size()));
    record_precision(state, *precision_, *store_, steps_);  // before the evaluation's forwards go through the same sites
    add_site_items(state, *precision_);
    precision_->begin_step(false);
    const double eval = eval_loss(*lm_, true);
    state.record("eval_loss", eval);
    if (ref_) record_gaps(state, eval, step_s, ref_s / n);
    state.add_item("chart/loss", {{"caption", "training loss (nats/byte)"},
                                  {"x_label", "step"},
                                  {"y_label", "loss (nats/byte)"},
                                  {"marks", {{{"y", eval}, {"label", "eval loss (held-out tenth)"}}}}});
  }

  void verify(State& state) override {
    verify_peak_fractions(state);
    if (losses_.empty()) return;
    const size_t w = std::min<size_t>(10, losses_.size());
    const double first = losses_.front(), last = mean_of(losses_, losses_.size() - w, losses_.size());
    // "Well below its start": a quarter off once the run is long enough to learn byte statistics;
    // below 20 steps the mean of the last 10 still holds the start, so nothing is judged.
    if (steps_ < 20) {
      state.warn("steps: fewer than 20 steps; the loss curve is not checked");
      return;
    }
    const double bound = steps_ >= 100 ? 0.75 * first : first;
    if (!(last < bound))
      state.fail("the loss did not fall enough: " + std::to_string(first) + " -> " + std::to_string(last) +
                 " nats/byte (needs < " + std::to_string(bound) + ")");
  }

 private:
  void fill_batch(std::mt19937_64& rng, size_t begin, size_t end, std::vector<uint8_t>& batch) const {
    const size_t len = static_cast<size_t>(cfg_.seq + 1);
    std::uniform_int_distribution<size_t> pick(begin, end - len);
    for (int64_t b = 0; b < batch_; ++b) {
      const size_t at = pick(rng);
      for (size_t i = 0; i < len; ++i) batch[b * len + i] = static_cast<uint8_t>(corpus_.text[at + i]);
    }
  }

  // The recipe against its fp32 twin: loss_gap (the last 10 steps), loss_gap_max (the 10-step moving mean's
  // largest), loss_gap_rel, eval_loss_gap, reference_step_ms and emulation_overhead.
  void record_gaps(State& state, double eval, double step_s, double ref_step_s) {
    const size_t n = gaps_.size(), w = std::min<size_t>(10, n);
    const double gap = mean_of(gaps_, n - w, n), ref_final = mean_of(ref_losses_, n - w, n);
    double worst = -std::numeric_limits<double>::infinity();
    for (size_t end = w; end <= n; ++end) worst = std::max(worst, mean_of(gaps_, end - w, end));
    state.record("loss_gap", gap);
    state.record("loss_gap_max", worst);
    state.record("loss_gap_rel", gap / ref_final);
    state.record("eval_loss_gap", eval - eval_loss(*ref_, false));
    state.record("reference_step_ms", ref_step_s * 1e3);
    state.record("emulation_overhead", step_s / ref_step_s);
    state.add_item("chart/loss_gap", {{"caption", "loss gap to the fp32 reference, mean of up to 10 steps (nats/byte)"},
                                      {"x_label", "step"},
                                      {"y_label", "gap (nats/byte)"},
                                      {"marks", {{{"y", 0.0}, {"label", "fp32"}}}}});
  }

  // Mean loss over 8 batches of the held-out tenth (fixed positions). With trace_eval, their routing is
  // traced as step `steps_` (the trained model), sequences numbered across the batches.
  double eval_loss(MoeLm<float>& lm, bool trace) {
    std::mt19937_64 rng(12345);
    std::vector<uint8_t> batch(batch_ * (cfg_.seq + 1));
    double sum = 0;
    for (int i = 0; i < 8; ++i) {
      fill_batch(rng, split_, corpus_.text.size(), batch);
      sum += lm.forward(batch.data(), batch_);
      if (trace && trace_ && trace_eval_)
        for (int64_t l = 0; l < cfg_.layers; ++l)
          trace_->write(steps_, l, lm.moe(l).routing(), batch.data(), cfg_.seq, i * batch_);
    }
    return sum / 8;
  }

  LmConfig cfg_;
  int64_t batch_ = 0, steps_ = 0, trace_every_ = 1;
  bool trace_eval_ = false;
  int threads_ = 1;
  CpuPeak peak_;
  double last_aux_ = 0, last_z_ = 0;
  Corpus corpus_;
  size_t split_ = 0;
  std::optional<precision::Precision> precision_;  // before the models: they hold its sites
  std::optional<MoeLm<float>> lm_;
  std::optional<precision::ActivationStore> store_;  // what the model saves for backward, all steps
  std::optional<MoeLm<float>> ref_;                // the fp32 twin of a recipe's case
  std::vector<double> gaps_, ref_losses_;          // per step: loss - the twin's loss, the twin's loss
  std::optional<RoutingTraceWriter> trace_;
  std::vector<double> losses_;
};

}  // namespace

MLSB_REGISTER_WORKLOAD(LmBench);

}  // namespace mlsb::moe_train
