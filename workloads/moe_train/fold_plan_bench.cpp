// moe_train.fold_plan: the planner of MoE Parallel Folding mappings (fold/fold_plan.hpp). For the case's block,
// the run's ranks and a modelled cluster it predicts every legal mapping's step, ranks them, and runs the best
// folded mapping, the best legacy one and the predicted top three on the modelled cluster, reporting predicted
// against measured and the folding gain.
#include <algorithm>
#include <cmath>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>

#include "harness/axes.hpp"
#include "harness/registry.hpp"
#include "util/stats.hpp"
#include "util/text.hpp"
#include "workloads/moe_train/case_config.hpp"
#include "workloads/moe_train/family.hpp"
#include "workloads/moe_train/fold/fold_axes.hpp"
#include "workloads/moe_train/fold/fold_plan.hpp"
#include "workloads/moe_train/fold/mapping_run.hpp"

namespace mlsb::moe_train {
namespace {

std::string tenths(double v) { return shortest(std::round(v * 10) / 10); }

class FoldPlanBench final : public Workload {
 public:
  WorkloadInfo info() const override {
    WorkloadInfo w;
    w.name = "moe_train.fold_plan";
    w.description =
        "Plans MoE Parallel Folding for a block, the run's ranks and a modelled cluster: predicts every legal mapping's "
        "step (measured compute plus modelled collectives), ranks them, runs the best folded, the best legacy "
        "(ETP = TP, EP within DP) and the predicted top three, and reports predicted against measured and the "
        "folding gain.";
    w.axes = fold::block_shape_axes();
    w.axes.push_back(int_axis("tp", {0}, "attention TP every mapping must use (0 = any)", 0, 4096));
    w.axes.push_back(int_axis("cp", {1}, "CP every mapping must use (0 = any)", 0, 4096));
    for (auto& a : fold::cluster_axes()) w.axes.push_back(std::move(a));
    w.axes.push_back(int_axis("plan_steps", {3}, "steps each mapping is measured for its prediction", 1, 1000));
    w.axes.push_back(int_axis("threads", {1}, "cpu: OpenBLAS and element-wise threads", 1, 1024));
    w.metrics = family_metrics({"step_ms", "predicted_ms", "prediction_error"});
    w.metrics.push_back({"legacy_ms", "ms", Better::Lower,
                         "the best legacy mapping (ETP = TP, EP dividing DP) measured on the modelled cluster"});
    w.metrics.push_back({"legacy_predicted_ms", "ms", Better::Lower, "its predicted step"});
    w.metrics.push_back({"folding_gain", "ratio", Better::Higher, "legacy_ms / step_ms (the best folded mapping)"});
    w.metrics.push_back({"ranking_agreement", "ratio", Better::Higher,
                         "1 when the predicted top three ran in the predicted order of their measured steps, else 0"});
    w.primary_metric = "step_ms";
    // Under mpirun (mpirun -n 8 mlsysbench ...): one rank skips the case.
    w.examples = {
        "run moe_train.fold_plan -p tp=2 -p ranks_per_node=4 -p inter_gbps=0.2",
        "run moe_train.fold_plan -p tp=0 -p cp=0 -p seq=128 -p batch=16 -p ranks_per_node=4 -p intra_gbps=1 "
        "-p inter_gbps=0.01",
        "run moe_train.fold_plan -p dispatcher=allgather -p tp=2 -p ranks_per_node=2 -p inter_gbps=0.1",
    };
    w.runner = {.warmup = 1, .min_samples = 3, .max_samples = 10, .min_time_s = 0.5, .max_noise = 0.05,
                .max_time_s = 30, .timeout_s = 1800};
    w.backends = {"cpu"};
    return w;
  }

  void check(const Params& p) const override {
    const WorkloadInfo wi = info();
    const State s(wi, p, 0, {});
    const int tp = static_cast<int>(s.get_int("tp")), cp = static_cast<int>(s.get_int("cp"));
    fold::check_sizes(fold::read_block(s), std::max(tp, 1), std::max(cp, 1), 1, 1, fold::kDefaultOrder);
  }

  void setup(State& state) override {
    comm_ = &cpu_comm(state);
    const int world = comm_->size();
    if (world == 1) state.skip("one rank: there is nothing to map (run under mpirun)");
    std::vector<fold::Mapping> candidates;
    try {
      block_ = fold::read_block(state);
      cluster_ = fold::read_cluster(state, world);
      candidates = fold::candidate_mappings(block_, world, static_cast<int>(state.get_int("tp")),
                                            static_cast<int>(state.get_int("cp")));
    } catch (const std::invalid_argument& e) {
      state.skip(e.what());
    }
    if (candidates.empty()) state.skip("no legal mapping of " + std::to_string(world) + " ranks for this block and tp/cp");
    const int threads = static_cast<int>(state.get_int("threads"));
    weights_ = fold::init_block(block_, state.seed());
    data_ = fold::block_data(block_, state.seed());
    plan_ = fold::plan_mappings(*comm_, block_, candidates, cluster_, weights_, data_, threads, 1,
                                static_cast<int>(state.get_int("plan_steps")));
    // What runs on the modelled cluster: the predicted top three, the best folded and the best legacy mapping.
    auto first = [&](bool legacy) {
      for (size_t i = 0; i < plan_.size(); ++i)
        if (plan_[i].mapping.legacy() == legacy) return static_cast<int>(i);
      return -1;
    };
    folded_ = first(false), legacy_ = first(true);
    if (folded_ < 0) state.skip("every legal mapping is a legacy one (ETP = TP, EP dividing DP): nothing is folded");
    std::set<int> chosen = {folded_};
    if (legacy_ >= 0) chosen.insert(legacy_);
    for (int i = 0; i < std::min<int>(3, static_cast<int>(plan_.size())); ++i) chosen.insert(i);
    for (int i : chosen) runs_[i] = std::make_unique<fold::MappingRun>(*comm_, block_, plan_[i].mapping, cluster_,
                                                                        weights_, data_, threads);
    state.note("plan: " + std::to_string(plan_.size()) + " mappings; best predicted " + plan_[0].mapping.label() +
               " (" + shortest(plan_[0].predicted_s * 1e3) + " ms); best folded " + plan_[folded_].mapping.label() +
               (legacy_ >= 0 ? "; best legacy " + plan_[legacy_].mapping.label() : "; no legacy mapping"));
  }

  void sample(State& state) override {
    std::map<int, double> step;
    for (auto& [i, run] : runs_) {
      step[i] = comm_->max_over_ranks(run->step());
      if (state.sample_index() >= 0) measured_[i].push_back(step[i]);
    }
    const double folded = step[folded_], predicted = plan_[folded_].predicted_s;
    state.record("step_ms", folded * 1e3);
    state.record("predicted_ms", predicted * 1e3);
    state.record("prediction_error", std::abs(predicted - folded) / folded);
    if (legacy_ >= 0) {
      state.record("legacy_ms", step[legacy_] * 1e3);
      state.record("legacy_predicted_ms", plan_[legacy_].predicted_s * 1e3);
      state.record("folding_gain", step[legacy_] / folded);
    }
    const int top = std::min<int>(3, static_cast<int>(plan_.size()));
    bool agree = true;
    for (int i = 1; i < top; ++i) agree &= step[i - 1] <= step[i];
    state.record("ranking_agreement", agree ? 1.0 : 0.0);
  }

  void verify(State& state) override {
    nlohmann::json ranking = nlohmann::json::array();
    for (size_t i = 0; i < plan_.size(); ++i) {
      const auto& p = plan_[i];
      nlohmann::json row = {{"mapping", p.mapping.label()},       {"legacy", p.mapping.legacy()},
                            {"base_ms", p.base_s * 1e3},          {"modelled_comm_ms", p.modelled_s * 1e3},
                            {"predicted_ms", p.predicted_s * 1e3}, {"cross_node_bytes", p.cross_node_bytes}};
      if (const auto it = measured_.find(static_cast<int>(i)); it != measured_.end() && !it->second.empty())
        row["measured_ms"] = median(it->second) * 1e3;
      ranking.push_back(row);
    }
    state.add_item("ranking", ranking);
    // The mappings that ran, predicted against measured, in the case's reason (what the text and HTML reports show).
    std::string ran;
    for (const auto& [i, steps] : measured_) {
      if (steps.empty()) continue;
      const auto& p = plan_[static_cast<size_t>(i)];
      ran += (ran.empty() ? "" : "; ") + std::string("#") + std::to_string(i + 1) + " " + p.mapping.label() +
             (p.mapping.legacy() ? " (legacy)" : "") + " " + tenths(p.predicted_s * 1e3) + " -> " +
             tenths(median(steps) * 1e3);
    }
    if (!ran.empty()) state.note("ranked by prediction, predicted -> measured ms: " + ran);
  }

  void teardown(State&) override { runs_.clear(); }

 private:
  comm::Communicator* comm_ = nullptr;
  fold::BlockConfig block_;
  fold::Cluster cluster_;
  fold::BlockWeights weights_;
  fold::BlockData data_;
  std::vector<fold::PlannedMapping> plan_;
  int folded_ = -1, legacy_ = -1;
  std::map<int, std::unique_ptr<fold::MappingRun>> runs_;  // index in plan_ -> its run on the modelled cluster
  std::map<int, std::vector<double>> measured_;            // index in plan_ -> measured steps (s)
};

}  // namespace

MLSB_REGISTER_WORKLOAD(FoldPlanBench);

}  // namespace mlsb::moe_train
