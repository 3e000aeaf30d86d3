// moe_train.plan: a FinDEP-style plan of the expert-parallel layer's chunked pipeline (schedule.hpp) for the
// run's ranks and a modelled link. Setup runs the layer in the sequential order (one chunk, the shared experts
// after the pipeline) to measure its tasks on the ranks (each local expert, the shared experts, the rest of
// forward and backward) and chooses the chunk count and where the shared experts compute; each sample then runs
// one step of the plan and one in the sequential order and records both beside their predictions.
#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "backends/comm/communicator.hpp"
#include "backends/cpu/gemm.hpp"
#include "harness/axes.hpp"
#include "harness/registry.hpp"
#include "util/clock.hpp"
#include "util/stats.hpp"
#include "util/text.hpp"
#include "workloads/moe_train/case_config.hpp"
#include "workloads/moe_train/family.hpp"
#include "workloads/moe_train/moe_layer.hpp"
#include "workloads/moe_train/overlap_check.hpp"
#include "workloads/moe_train/schedule.hpp"

namespace mlsb::moe_train {
namespace {

constexpr int kProfileSteps = 3;  // measured steps (after the warm-up) whose median per task the plan uses

// Seconds of one step of `layer` on this rank, forward and backward; its times() hold the step's pieces.
std::array<double, 2> step_s(MoeLayer<float>& layer, const LayerInputs& in, int64_t tokens, std::vector<float>& y,
                             std::vector<float>& dx) {
  layer.zero_grad();
  layer.times() = {};
  auto t0 = Clock::now();
  layer.forward(in.x.data(), tokens, y.data());
  const double forward = seconds_since(t0);
  t0 = Clock::now();
  layer.backward(in.dy.data(), dx.data());
  return {forward, seconds_since(t0)};
}

double sum(const std::array<double, 2>& v) { return v[0] + v[1]; }

class PlanBench final : public Workload {
 public:
  WorkloadInfo info() const override {
    WorkloadInfo w;
    w.name = "moe_train.plan";
    w.description =
        "A FinDEP-style plan of overlapped expert parallelism for the run's ranks (2 or more: run it under mpirun) and "
        "a modelled link: measures the "
        "layer's tasks (experts, shared experts, router and permutes) on the ranks, chooses the chunk count and where "
        "the shared experts compute to minimise the modelled step, then runs the plan and reports its measured step "
        "beside the prediction and the sequential layer's.";
    w.axes = layer_shape_axes();
    w.axes.push_back(data_axis(int_axis("tokens", {2048}, "tokens per step per rank", 1, 1LL << 31)));
    w.axes.push_back(float_axis("link_gbps", {1.0},
                                "modelled link for the all-to-alls, GB/s per rank (bytes / bandwidth + latency per "
                                "message after each one's start): the link the plan is for",
                                1e-6, 1e6));
    w.axes.push_back(float_axis("link_latency_us", {0.0}, "modelled link: latency per message, microseconds", 0, 1e9));
    w.axes.push_back(float_axis("min_gain", {0.1},
                                "the least predicted gain (a fraction of the sequential step) for which a pipeline is "
                                "chosen; below it the plan is the sequential order (the model leaves out what the "
                                "transport in flight costs the experts beside it: 8% of their GEMM speed measured on "
                                "2 CPU ranks)",
                                0, 0.99));
    for (auto& a : training_axes())
      if (a.name != "lr") w.axes.push_back(std::move(a));
    w.metrics = family_metrics(
        {"step_ms", "predicted_ms", "prediction_error", "sequential_ms", "predicted_sequential_ms", "speedup"});
    w.metrics[0].help = "forward + backward of the layer run as planned (max over ranks)";
    w.primary_metric = "step_ms";
    w.examples = {
        "run moe_train.plan -p link_gbps=1 -p preset=mixtral-8x7b -p scale=8",
        "run moe_train.plan -p link_gbps=0.5,2,8 -p link_latency_us=20",
        "run moe_train.plan -p shared_experts=1 -p experts=16 -p topk=4 -p link_gbps=1",
    };
    w.runner = {.warmup = kLayerWarmupSteps,
                .min_samples = 3,
                .max_samples = 20,
                .min_time_s = 0.5,
                .max_noise = 0.03,
                .max_time_s = 20,
                .timeout_s = 1200};
    return w;
  }
  std::string memory_hint(const State&) const override { return std::string(kMemoryHint); }

  void setup(State& state) override {
    comm_ = &cpu_comm(state);
    const int ranks = comm_->size();
    if (ranks < 2)
      state.skip(
          "moe_train.plan plans expert-parallel communication: run it on 2 or more ranks "
          "(mpirun -n 2 mlsysbench run moe_train.plan ...)");
    config_ = layer_config(state, ranks);
    tokens_ = state.get_int("tokens");
    threads_ = static_cast<int>(state.get_int("threads"));
    link_ = comm::make_link_model(state.get_float("link_gbps"), state.get_float("link_latency_us"));  // axes bound it
    cpu::set_blas_threads(threads_);
    in_ = layer_inputs(state.seed(), comm_->rank(), tokens_, config_.hidden);
    y_.resize(in_.x.size()), dx_.resize(in_.x.size());
    EpOptions sequential;  // one chunk, the shared experts after the pipeline: nothing overlaps
    sequential.overlap = Overlap::Chunked, sequential.link = link_;
    sequential_ = std::make_unique<MoeLayer<float>>(config_, comm_, threads_, sequential);
    sequential_->init(state.seed());
    const ScheduleInputs inputs = measure();
    plan_ = choose_schedule(inputs, kMaxChunks, state.get_float("min_gain"));
    ep_.overlap = Overlap::Chunked, ep_.chunks = plan_.schedule.chunks, ep_.link = link_;
    ep_.shared_slot = plan_.schedule.shared_slot;
    planned_ = std::make_unique<MoeLayer<float>>(config_, comm_, threads_, ep_);
    planned_->init(state.seed());
    add_plan_items(state, inputs);
  }

  void sample(State& state) override {
    const double planned = comm_->max_over_ranks(sum(step_s(*planned_, in_, tokens_, y_, dx_)));
    const double sequential = comm_->max_over_ranks(sum(step_s(*sequential_, in_, tokens_, y_, dx_)));
    state.record("step_ms", planned * 1e3);
    state.record("predicted_ms", plan_.predicted_s * 1e3);
    state.record("prediction_error", std::abs(plan_.predicted_s - planned) / planned);
    state.record("sequential_ms", sequential * 1e3);
    state.record("predicted_sequential_ms", plan_.sequential_s * 1e3);
    state.record("speedup", sequential / planned);
  }

  void verify(State& state) override {
    const std::string same =
        check_overlap_identical(config_, *comm_, threads_, ep_, state.seed(), in_.x.data(), in_.dy.data(), tokens_);
    if (!same.empty()) state.fail("the plan's layer: " + same);
  }

 private:
  // The schedule's inputs, measured on every rank and agreed by all: the layer in the sequential order over the
  // case's link, kLayerWarmupSteps then kProfileSteps, the median of each task per rank.
  ScheduleInputs measure() {
    const int P = comm_->size();
    const int64_t L = config_.experts / P;
    MoeLayer<float>& layer = *sequential_;
    // Per step, this rank's [direction][expert_s..., shared_s, other_s].
    const int64_t per_dir = L + 2;
    std::vector<std::vector<double>> steps(2 * per_dir);
    for (int s = 0; s < kLayerWarmupSteps + kProfileSteps; ++s) {
      const std::array<double, 2> dir_s = step_s(layer, in_, tokens_, y_, dx_);
      if (s < kLayerWarmupSteps) continue;
      for (int d = 0; d < 2; ++d) {
        const PipelinePieces& p = layer.times().pieces[d];
        const double experts = std::accumulate(p.expert_s.begin(), p.expert_s.end(), 0.0);
        for (int64_t j = 0; j < L; ++j) steps[d * per_dir + j].push_back(p.expert_s[j]);
        // Without shared experts their task is nothing (not the few ns of timing an empty call): the plan
        // then ties to "after the pipeline" and places none.
        steps[d * per_dir + L].push_back(config_.shared_experts > 0 ? p.shared_s : 0.0);
        steps[d * per_dir + L + 1].push_back(std::max(0.0, dir_s[d] - p.wait_s - experts - p.shared_s));
      }
    }
    std::vector<double> mine(2 * per_dir), all(P * mine.size());
    for (size_t i = 0; i < mine.size(); ++i) mine[i] = median(steps[i]);
    comm_->allgather(mine.data(), all.data(), mine.size(), comm::ElemType::F64);
    ScheduleInputs in;
    in.ranks = P, in.experts = config_.experts, in.row_bytes = config_.hidden * sizeof(float), in.link = link_;
    const std::vector<int64_t> counts = layer.plan().tokens_per_expert();
    in.counts.resize(P * config_.experts);
    comm_->allgather(counts.data(), in.counts.data(), counts.size(), comm::ElemType::I64);
    for (int d = 0; d < 2; ++d) {
      DirectionTimes& t = in.times[d];
      for (int r = 0; r < P; ++r) {
        const double* x = all.data() + r * mine.size() + d * per_dir;
        t.expert_s.insert(t.expert_s.end(), x, x + L);
        t.shared_s.push_back(x[L]), t.other_s.push_back(x[L + 1]);
      }
    }
    return in;
  }

  // The plan (item "plan"), the tasks it was made from (item "tasks/<rank>", ms) and the least predicted step
  // per chunk count (series "predicted_step", drawn as a line).
  void add_plan_items(State& state, const ScheduleInputs& in) {
    const Schedule& s = plan_.schedule;
    const bool shared = config_.shared_experts > 0;
    // The moe_train.layer axes that run the plan over the same link (the shape axes are the case's own).
    std::string args = "-p overlap=chunked -p chunks=" + std::to_string(s.chunks);
    if (shared)
      args += " -p shared_slot_fwd=" + std::to_string(s.shared_slot[0]) +
              " -p shared_slot_bwd=" + std::to_string(s.shared_slot[1]);
    args += " -p link_gbps=" + shortest(state.get_float("link_gbps")) +
            " -p link_latency_us=" + shortest(state.get_float("link_latency_us"));
    auto place = [&](int dir) { return shared ? shared_place(s.chunks, s.shared_slot[dir]) : "no shared experts"; };
    // Why this plan, in a sentence the report and the progress line show.
    const auto named = [&](const Schedule& x) {
      return "chunks=" + std::to_string(x.chunks) +
             (shared ? ", shared experts " + shared_place(x.chunks, x.shared_slot[0]) + " (forward), " +
                           shared_place(x.chunks, x.shared_slot[1]) + " (backward)"
                     : std::string());
    };
    const auto pct = [&](double t) { return shortest(std::round(1000 * (1 - t / plan_.sequential_s)) / 10) + "%"; };
    const std::string min_gain = shortest(100 * state.get_float("min_gain")) + "%";
    const std::string decision =
        plan_.kept_sequential
            ? "the sequential order: the best pipeline (" + named(plan_.best) + ") is predicted only " +
                  pct(plan_.best_s) + " faster than it, under min_gain " + min_gain
        : s.chunks == 1 && s.shared_slot[0] < 0 && s.shared_slot[1] < 0
            ? "the sequential order: no pipeline is predicted faster"
            : named(s) + ": predicted " + pct(plan_.predicted_s) + " faster than the sequential order (min_gain " +
                  min_gain + ")";
    state.note("plan: " + decision);
    state.add_item("plan", {{"decision", decision},
                            {"kept_sequential", plan_.kept_sequential},
                            {"best_chunks", plan_.best.chunks},
                            {"best_predicted_ms", plan_.best_s * 1e3},
                            {"chunks", s.chunks},
                            {"shared_slot_fwd", s.shared_slot[0]},
                            {"shared_slot_bwd", s.shared_slot[1]},
                            {"shared_forward", place(0)},
                            {"shared_backward", place(1)},
                            {"predicted_ms", plan_.predicted_s * 1e3},
                            {"predicted_sequential_ms", plan_.sequential_s * 1e3},
                            {"layer_args", args}});
    const int64_t L = in.experts / in.ranks;
    auto ms = [](auto begin, auto end) {
      nlohmann::json v = nlohmann::json::array();
      for (auto it = begin; it != end; ++it) v.push_back(*it * 1e3);
      return v;
    };
    for (int r = 0; r < in.ranks; ++r) {
      nlohmann::json item;
      for (int d = 0; d < 2; ++d) {
        const DirectionTimes& t = in.times[d];
        item[d ? "backward" : "forward"] = {
            {"experts_ms", ms(t.expert_s.begin() + r * L, t.expert_s.begin() + (r + 1) * L)},
            {"shared_ms", t.shared_s[r] * 1e3},
            {"other_ms", t.other_s[r] * 1e3}};
      }
      state.add_item("tasks/" + std::to_string(r), item);
    }
    for (size_t c = 0; c < plan_.best_by_chunks.size(); ++c)
      state.add_item("series/predicted_step/" + std::to_string(c + 1),
                     {{"x", c + 1}, {"y", plan_.best_by_chunks[c] * 1e3}});
    state.add_item("chart/predicted_step", {{"caption", "the planner's least predicted step per chunk count"},
                                            {"x_label", "chunks"},
                                            {"y_label", "predicted step (ms)"},
                                            {"kind", "line"},
                                            {"marks", {{{"y", plan_.sequential_s * 1e3}, {"label", "sequential"}}}}});
  }

  comm::Communicator* comm_ = nullptr;
  MoeConfig config_;
  comm::LinkModel link_;
  int64_t tokens_ = 0;
  int threads_ = 1;
  LayerInputs in_;
  std::vector<float> y_, dx_;
  PlanResult plan_;
  EpOptions ep_;
  std::unique_ptr<MoeLayer<float>> planned_, sequential_;
};

}  // namespace

MLSB_REGISTER_WORKLOAD(PlanBench);

}  // namespace mlsb::moe_train
