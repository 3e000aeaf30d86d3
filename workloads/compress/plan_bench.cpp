// compress.plan: profiles candidate codecs on every tensor of a model (a preset or a safetensors file),
// chooses a per-tensor plan under an error budget for a modelled link, then runs the plan and reports
// its measured time beside the prediction.
#include <cmath>
#include <limits>

#include "harness/axes.hpp"
#include "harness/registry.hpp"
#include "workloads/compress/error_metrics.hpp"
#include "workloads/compress/inputs.hpp"
#include "workloads/compress/link_model.hpp"
#include "workloads/compress/model_presets.hpp"
#include "workloads/compress/case_setup.hpp"
#include "workloads/compress/family.hpp"
#include "workloads/compress/planner.hpp"

namespace mlsb::compress {
namespace {

double norm2_of(TensorView t) {
  double s = 0;
  for (int64_t i = 0; i < t.count; ++i) {
    const double v = load_float(t.data, t.dtype, i);
    if (std::isfinite(v)) s += v * v;
  }
  return s;
}

// One round trip: times, compressed size and squared error. Codec "none" sends the tensor as it is:
// no codec time, the tensor's bytes on the wire.
OptionCost round_trip(Codec& codec, const Tensor& x, std::vector<uint8_t>& stream, std::vector<uint8_t>& dec) {
  OptionCost c;
  if (codec.name() == "none") {
    c.wire_bytes = static_cast<double>(x.data.size());
    return c;
  }
  stream.resize(codec.max_compressed_bytes(x.view()));
  dec.resize(x.data.size());
  const TimedRoundTrip rt = timed_round_trip(codec, x.view(), stream, dec);
  c.compress_s = rt.compress_s;
  c.decompress_s = rt.decompress_s;
  c.wire_bytes = static_cast<double>(rt.stream_bytes);
  if (!codec.lossless()) {
    const ErrorMetrics e = compare_tensors(x.view(), {dec.data(), x.count(), x.dtype, {}});
    c.sq_error = std::isfinite(e.rel_l2) ? e.sum_sq_error : INFINITY;
  }
  return c;
}

class PlanBench final : public Workload {
 public:
  WorkloadInfo info() const override {
    WorkloadInfo w;
    w.name = "compress.plan";
    w.description =
        "A Kimad-style per-tensor codec plan: profiles candidate codecs on every tensor of a model (a preset's "
        "shapes with generated values, or a .safetensors file), chooses a codec per tensor under an error budget "
        "for a modelled link, runs the plan and reports its measured time beside the prediction.";
    w.axes = {
        data_axis(string_axis("model", {"gpt2-small"}, "model preset whose tensors are planned", preset_names())),
        data_axis(int_axis("scale", {16}, "every preset dimension is divided by this", 1, 1 << 20)),
        float_axis("error_budget", {0.01}, "allowed relative L2 error over all tensors", 0, 10),
    };
    for (auto& a : input_axes())
      if (a.name != "elements" && a.name != "tensor") w.axes.push_back(std::move(a));
    w.axes.push_back(link_axis());
    w.axes.push_back(threads_axis());
    w.metrics = family_metrics({"time_ms", "predicted_ms", "ratio", "rel_l2_error", "speedup",
                                "baseline_model_time_ms"});
    w.metrics[0].help = "measured codec time of the plan + modelled wire time";
    w.primary_metric = "time_ms";
    w.examples = {
        "run compress.plan -p model=llama2-7b -p link_gbps=25",
        "run compress.plan -p link_gbps=1,12.5,50 -p error_budget=0,0.01",
        "run compress.plan -p model=gpt2-small -p scale=4 -p link_gbps=12.5 -p threads=2",
    };
    w.runner = family_runner();
    return w;
  }

  void setup(State& state) override {
    link_ = state.get_float("link_gbps");
    if (!(link_ > 0)) state.skip("compress.plan models a link: set -p link_gbps=<GB/s>");
    budget_ = state.get_float("error_budget");
    load_tensors(state);
    const int threads = static_cast<int>(state.get_int("threads"));
    std::vector<uint8_t> stream, dec;
    costs_.clear();
    codecs_.clear();
    for (const Tensor& t : tensors_) {
      TensorCosts tc{t.name, static_cast<double>(t.data.size()), norm2_of(t.view()), {}};
      auto& mine = codecs_.emplace_back();
      for (CodecConfig cfg : plan_candidates(t.dtype)) {
        if (state.cancelled()) return;
        cfg.threads = threads;
        cfg.seed = state.seed();
        std::unique_ptr<Codec> codec;
        OptionCost cost;
        try {
          codec = make_codec(cfg);
          cost = round_trip(*codec, t, stream, dec);
        } catch (const std::exception&) {  // e.g. powersgd's rank exceeds a small tensor's dimensions
          cost.compress_s = INFINITY;
        }
        tc.options.push_back(cost);
        mine.push_back({cfg, std::move(codec)});
      }
      costs_.push_back(std::move(tc));
    }
    plan_ = choose_plan(costs_, link_, budget_);
    for (size_t i = 0; i < tensors_.size(); ++i) {
      const OptionCost& c = costs_[i].options[plan_.choice[i]];
      const CodecConfig& cfg = codecs_[i][plan_.choice[i]].config;
      state.add_item("tensor/" + tensors_[i].name,
                     {{"tensor", tensors_[i].name},
                      {"elements", tensors_[i].count()},
                      {"codec", cfg.name},
                      {"density", cfg.name == "topk" ? cfg.density : 1.0},
                      {"ratio", costs_[i].bytes / c.wire_bytes},
                      {"predicted_ms", modelled_step_s(c.compress_s, c.wire_bytes, c.decompress_s, link_) * 1e3},
                      {"uncompressed_ms", transfer_s(costs_[i].bytes, link_) * 1e3},
                      {"rel_error", costs_[i].norm2 > 0 ? std::sqrt(c.sq_error / costs_[i].norm2) : 0.0}});
    }
  }

  void sample(State& state) override {
    double codec_s = 0, wire = 0, bytes = 0, err = 0, norm2 = 0;
    std::vector<uint8_t> stream, dec;
    for (size_t i = 0; i < tensors_.size(); ++i) {
      if (state.cancelled()) return;
      Codec& codec = *codecs_[i][plan_.choice[i]].codec;
      codec.reset();
      const OptionCost c = round_trip(codec, tensors_[i], stream, dec);
      codec_s += c.compress_s + c.decompress_s;
      wire += c.wire_bytes;
      bytes += costs_[i].bytes;
      err += c.sq_error;
      norm2 += costs_[i].norm2;
    }
    const double measured = codec_s + transfer_s(wire, link_);
    const double baseline = transfer_s(bytes, link_);
    measured_error_ = norm2 > 0 ? std::sqrt(err / norm2) : 0;
    state.record("time_ms", measured * 1e3);
    state.record("predicted_ms", plan_.predicted_s * 1e3);
    state.record("baseline_model_time_ms", baseline * 1e3);
    state.record("speedup", baseline / measured);
    state.record("ratio", bytes / wire);
    state.record("rel_l2_error", measured_error_);
  }

  void verify(State& state) override {
    if (measured_error_ > budget_ * 1.1 + 1e-9)
      state.fail("the plan's relative L2 error " + std::to_string(measured_error_) + " exceeds the budget " +
                 std::to_string(budget_));
  }

 private:
  void load_tensors(State& state) {
    tensors_.clear();
    if (state.get_string("tensor_file") != "none") {
      const auto file = input_path(state, "tensor_file");
      for (const TensorInfo& info : list_tensors(file)) tensors_.push_back(load_tensor(file, info.name));
      if (tensors_.empty()) state.fail(file.string() + " holds no tensors");
      return;
    }
    const DType dtype = generated_dtype(state);
    uint64_t k = 0;
    for (const PresetTensor& p : preset_tensors(state.get_string("model"), state.get_int("scale"))) {
      int64_t count = 1;
      for (int64_t v : p.shape) count *= v;
      Tensor t = generate(state.get_string("distribution"), dtype, count, state.get_float("sigma"),
                          splitmix64(state.seed() + ++k));
      t.name = p.name;
      t.shape = p.shape;
      tensors_.push_back(std::move(t));
    }
  }

  struct Candidate {
    CodecConfig config;
    std::unique_ptr<Codec> codec;
  };
  double link_ = 0, budget_ = 0, measured_error_ = 0;
  std::vector<Tensor> tensors_;
  std::vector<TensorCosts> costs_;
  std::vector<std::vector<Candidate>> codecs_;
  Plan plan_;
};

}  // namespace

MLSB_REGISTER_WORKLOAD(PlanBench);

}  // namespace mlsb::compress
