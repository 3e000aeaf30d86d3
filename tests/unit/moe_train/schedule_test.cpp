// The schedule planner of overlapped expert parallelism: its model on cases worked by hand, its solver against
// an exhaustive search (every chunk count, the shared experts at every place of the executor's sequence of
// operations, simulated by an event loop of its own), and bad inputs named by their parameter.
#include "workloads/moe_train/schedule.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>

namespace mlsb::moe_train {
namespace {

// Two ranks, one expert each, every rank sending `rows` rows to each expert; one row is 1000 bytes.
ScheduleInputs two_ranks(int64_t rows, double expert_s, double shared_s, double other_s) {
  ScheduleInputs in;
  in.ranks = 2, in.experts = 2, in.row_bytes = 1000, in.link = comm::make_link_model(1, 10);
  in.counts.assign(4, rows);
  for (DirectionTimes& t : in.times) t = {{expert_s, expert_s}, {shared_s, shared_s}, {other_s, other_s}};
  return in;
}

TEST(MoeSchedule, OneChunkIsTheSequentialSum) {
  const ScheduleInputs in = two_ranks(1000, 0.004, 0.003, 0.01);
  // Each all-to-all moves 1000 rows of 1000 bytes off the rank at 1 GB/s (1 ms) plus one message's 10 us.
  const double link = 1e-3 + 10e-6;
  const PipelineTasks t = pipeline_tasks(in, 0, 1);
  EXPECT_NEAR(t.dispatch[0], link, 1e-12);
  EXPECT_NEAR(t.combine[1], link, 1e-12);
  EXPECT_NEAR(direction_s(t, -1), 0.01 + link + 0.004 + link + 0.003, 1e-12);
  EXPECT_NEAR(choose_schedule(in).sequential_s, 2 * (0.01 + 2 * link + 0.007), 1e-12);
  EXPECT_NEAR(predict_step_s(in, {}), 2 * (0.01 + 2 * link + 0.007), 1e-12);
}

TEST(MoeSchedule, SharedExpertsHideTheFirstDispatch) {
  // The shared experts (0.5 ms) fit in the first dispatch (1 ms): running them before waiting for it hides them.
  const ScheduleInputs in = two_ranks(1000, 0.004, 0.0005, 0);
  const double link = 1e-3 + 10e-6;
  const PlanResult one = choose_schedule(in, 1);
  EXPECT_EQ(one.schedule.chunks, 1);
  EXPECT_EQ(one.schedule.shared_slot[0], 0);
  EXPECT_EQ(shared_place(1, 0), "before waiting for dispatch 0");
  EXPECT_NEAR(one.predicted_s, 2 * (link + 0.004 + link), 1e-12);
  EXPECT_NEAR(one.sequential_s - one.predicted_s, 2 * 0.0005, 1e-12);
}

// A pipeline predicted to gain less than min_gain of the sequential step is not chosen: the plan is then the
// sequential order, predicted as such.
TEST(MoeSchedule, AGainBelowTheMarginKeepsTheSequentialOrder) {
  const ScheduleInputs in = two_ranks(1000, 0.004, 0.0005, 0);
  const PlanResult free = choose_schedule(in, 1);
  const double gain = 1 - free.predicted_s / free.sequential_s;  // the shared experts hidden: about 5%
  ASSERT_GT(gain, 0.01);
  const PlanResult below = choose_schedule(in, 1, gain * 0.9);
  EXPECT_EQ(below.schedule.shared_slot[0], 0) << "a gain above the margin is taken";
  EXPECT_NEAR(below.predicted_s, free.predicted_s, 1e-15);
  const PlanResult above = choose_schedule(in, 1, gain * 1.1);
  EXPECT_EQ(above.schedule.chunks, 1);
  EXPECT_EQ(above.schedule.shared_slot[0], -1);
  EXPECT_EQ(above.schedule.shared_slot[1], -1);
  EXPECT_EQ(above.predicted_s, above.sequential_s);
  EXPECT_EQ(above.best_by_chunks, free.best_by_chunks) << "the curve the plan was chosen from is unchanged";
  // Why: the margin kept the sequential order, and the faster schedule it passed over is kept.
  EXPECT_TRUE(above.kept_sequential);
  EXPECT_FALSE(below.kept_sequential);
  EXPECT_EQ(above.best.shared_slot[0], 0);
  EXPECT_NEAR(above.best_s, free.predicted_s, 1e-15);
}

TEST(MoeSchedule, TasksCutByChunksComputeEveryExpertOnce) {
  ScheduleInputs in = two_ranks(0, 0, 0, 0);
  in.experts = 4;
  in.counts = {5, 0, 3, 7, 2, 9, 0, 4};
  for (DirectionTimes& t : in.times) t.expert_s = {0.1, 0.2, 0.3, 0.4};
  for (int64_t C : {1, 2, 3, 16}) {
    const PipelineTasks t = pipeline_tasks(in, 1, C);
    for (int r = 0; r < 2; ++r) {
      double compute = 0;
      for (int64_t i = 0; i < C; ++i) compute += t.compute[r * C + i];
      EXPECT_NEAR(compute, r == 0 ? 0.3 : 0.7, 1e-12) << "every local expert computed once, C " << C;
    }
  }
}

TEST(MoeSchedule, SharedPlacesReadAsTheWaits) {
  EXPECT_EQ(shared_place(3, -1), "after the pipeline");
  EXPECT_EQ(shared_place(3, 0), "before waiting for dispatch 0");
  EXPECT_EQ(shared_place(3, 1), "before waiting for dispatch 1");
  EXPECT_EQ(shared_place(3, 2), "before waiting for combine 0");
  EXPECT_EQ(shared_place(3, 3), "before waiting for dispatch 2");
  EXPECT_EQ(shared_place(3, 4), "before waiting for combine 1");
  EXPECT_EQ(shared_place(3, 5), "before waiting for combine 2");
  EXPECT_EQ(shared_place(3, 6), "after the pipeline");
}

// The oracle: EpExchange::chunked's sequence of operations, the same on every rank, run by an event loop
// that advances each rank until it waits for an all-to-all some rank has not started.
enum class Op { StartDispatch, WaitDispatch, Compute, StartCombine, WaitCombine, Shared };
struct Step {
  Op op;
  int64_t i;
};

std::vector<Step> executor_sequence(int64_t C) {
  std::vector<Step> seq = {{Op::StartDispatch, 0}};
  for (int64_t i = 0; i < C; ++i) {
    if (i + 1 < C) seq.push_back({Op::StartDispatch, i + 1});
    seq.push_back({Op::WaitDispatch, i});
    seq.push_back({Op::Compute, i});
    seq.push_back({Op::StartCombine, i});
    if (i > 0) seq.push_back({Op::WaitCombine, i - 1});
  }
  seq.push_back({Op::WaitCombine, C - 1});
  return seq;
}

double simulate(const PipelineTasks& t, const std::vector<Step>& seq) {
  const int P = t.ranks;
  const int64_t C = t.chunks;
  std::vector<double> now(P, 0);
  std::vector<size_t> pc(P, 0);
  std::vector<std::vector<double>> starts[2] = {std::vector<std::vector<double>>(C),
                                                std::vector<std::vector<double>>(C)};
  for (bool moved = true; moved;) {
    moved = false;
    for (int r = 0; r < P; ++r)
      for (; pc[r] < seq.size(); ++pc[r], moved = true) {
        const Step s = seq[pc[r]];
        const bool combine = s.op == Op::StartCombine || s.op == Op::WaitCombine;
        auto& started = starts[combine][s.i];
        if (s.op == Op::StartDispatch || s.op == Op::StartCombine) {
          started.resize(P, -1);
          started[r] = now[r];
        } else if (s.op == Op::Compute) {
          now[r] += t.compute[r * C + s.i];
        } else if (s.op == Op::Shared) {
          now[r] += t.shared_s[r];
        } else {
          if (started.size() < static_cast<size_t>(P) ||
              std::any_of(started.begin(), started.end(), [](double v) { return v < 0; }))
            break;  // a peer has not started it yet
          const double link = (combine ? t.combine : t.dispatch)[r * C + s.i];
          now[r] = std::max({now[r], started[r] + link, *std::max_element(started.begin(), started.end())});
        }
      }
  }
  double slowest = 0;
  for (int r = 0; r < P; ++r) {
    EXPECT_EQ(pc[r], seq.size()) << "deadlock";
    slowest = std::max(slowest, t.other_s[r] + now[r]);
  }
  return slowest;
}

// The executor's sequence with the shared experts at `slot` (as EpOptions::shared_slot).
std::vector<Step> with_shared_at_slot(int64_t C, int64_t slot) {
  std::vector<Step> seq = executor_sequence(C);
  int64_t waits = 0;
  for (auto it = seq.begin(); it != seq.end(); ++it)
    if ((it->op == Op::WaitDispatch || it->op == Op::WaitCombine) && waits++ == slot) {
      seq.insert(it, {Op::Shared, 0});
      return seq;
    }
  seq.push_back({Op::Shared, 0});
  return seq;
}

// Times spread over two decades each, so that links, experts and shared experts each dominate somewhere.
ScheduleInputs random_instance(std::mt19937_64& rng, int P, int64_t L) {
  std::uniform_real_distribution<double> u(0, 1);
  auto spread = [&](double low) { return low * std::pow(100.0, u(rng)); };
  ScheduleInputs in;
  in.ranks = P, in.experts = P * L, in.row_bytes = 256;
  in.link = comm::make_link_model(spread(0.1), u(rng) < 0.5 ? 0 : spread(1));
  in.counts.resize(P * in.experts);
  for (auto& n : in.counts) n = u(rng) < 0.2 ? 0 : static_cast<int64_t>(u(rng) * 400);
  for (DirectionTimes& t : in.times) {
    for (int64_t j = 0; j < P * L; ++j) t.expert_s.push_back(spread(1e-5));
    for (int r = 0; r < P; ++r) t.shared_s.push_back(u(rng) < 0.2 ? 0 : spread(1e-4));
    for (int r = 0; r < P; ++r) t.other_s.push_back(spread(1e-6));
  }
  return in;
}

TEST(MoeSchedule, SolverEqualsExhaustiveSearchOverChunksAndEveryOrder) {
  std::mt19937_64 rng(17);
  constexpr int64_t kChunks = 5;
  int instances = 0;
  for (int P : {2, 3})
    for (int64_t L : {1, 2, 3})
      for (int rep = 0; rep < 20; ++rep, ++instances) {
        const ScheduleInputs in = random_instance(rng, P, L);
        const PlanResult plan = choose_schedule(in, kChunks);
        const std::string what =
            "ranks " + std::to_string(P) + ", local experts " + std::to_string(L) + ", rep " + std::to_string(rep);
        ASSERT_EQ(plan.best_by_chunks.size(), static_cast<size_t>(kChunks));
        double best = INFINITY, sequential = 0;
        for (int64_t C = 1; C <= kChunks; ++C) {
          double step = 0;
          for (int dir = 0; dir < 2; ++dir) {
            const PipelineTasks t = pipeline_tasks(in, dir, C);
            const std::vector<Step> seq = executor_sequence(C);
            double least = INFINITY;
            for (size_t gap = 0; gap <= seq.size(); ++gap) {  // the shared experts before operation `gap`
              std::vector<Step> order = seq;
              order.insert(order.begin() + static_cast<std::ptrdiff_t>(gap), {Op::Shared, 0});
              least = std::min(least, simulate(t, order));
            }
            step += least;
            if (C == 1) sequential += simulate(t, with_shared_at_slot(1, -1));
          }
          EXPECT_NEAR(plan.best_by_chunks[C - 1], step, 1e-12 * step) << what << ", chunks " << C;
          best = std::min(best, step);
        }
        EXPECT_NEAR(plan.predicted_s, best, 1e-12 * best) << what;
        EXPECT_NEAR(plan.sequential_s, sequential, 1e-12 * sequential) << what;
        // The solver's choice, run by the oracle, is optimal.
        double chosen = 0;
        for (int dir = 0; dir < 2; ++dir)
          chosen += simulate(pipeline_tasks(in, dir, plan.schedule.chunks),
                             with_shared_at_slot(plan.schedule.chunks, plan.schedule.shared_slot[dir]));
        EXPECT_NEAR(chosen, best, 1e-12 * best) << what;
        EXPECT_NEAR(predict_step_s(in, plan.schedule), best, 1e-12 * best) << what;
      }
  EXPECT_EQ(instances, 120);
}

TEST(MoeSchedule, BadInputsNameTheParameter) {
  auto throws = [](const ScheduleInputs& in, const char* prefix) {
    EXPECT_THAT([&] { choose_schedule(in); },
                testing::ThrowsMessage<std::invalid_argument>(testing::StartsWith(prefix)));
  };
  const ScheduleInputs good = two_ranks(10, 1e-3, 0, 0);
  EXPECT_NO_THROW(choose_schedule(good));
  ScheduleInputs in = good;
  in.ranks = 1;
  throws(in, "ranks:");
  in = good;
  in.ranks = 4;  // more ranks than the 2 experts
  throws(in, "experts:");
  in = good;
  in.experts = 3;
  throws(in, "experts:");
  in = good;
  in.link = comm::make_link_model(0, 0);
  throws(in, "link_gbps:");
  in = good;
  in.counts.pop_back();
  throws(in, "counts:");
  in = good;
  in.times[1].expert_s[0] = -1;
  throws(in, "measured times:");
  in = good;
  in.times[0].other_s = {0};
  throws(in, "measured times:");
  EXPECT_THAT([&] { choose_schedule(good, kMaxChunks + 1); },
              testing::ThrowsMessage<std::invalid_argument>(testing::StartsWith("chunks:")));
  for (const double bad : {-0.1, 1.0, std::nan("")})
    EXPECT_THAT([&] { choose_schedule(good, kMaxChunks, bad); },
                testing::ThrowsMessage<std::invalid_argument>(testing::StartsWith("min_gain:")));
}

}  // namespace
}  // namespace mlsb::moe_train
