#include "workloads/moe_train/schedule.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "util/text.hpp"

namespace mlsb::moe_train {
namespace {

void expect_times(const std::vector<double>& v, size_t n, const char* what) {
  if (v.size() != n)
    throw std::invalid_argument(std::string("measured times: ") + what + " holds " + std::to_string(v.size()) +
                                " values, not " + std::to_string(n));
  for (double t : v)
    if (!(t >= 0) || !std::isfinite(t))
      throw std::invalid_argument(std::string("measured times: ") + what + " holds " + std::to_string(t) +
                                  " (must be finite and >= 0)");
}

}  // namespace

std::string shared_place(int64_t chunks, int64_t slot) {
  if (slot < 0 || slot >= pipeline_waits(chunks)) return "after the pipeline";
  // Waits: dispatch 0, then for each step i >= 1 dispatch i (slot 2i-1) and combine i-1 (slot 2i), then the
  // last combine (slot 2 * chunks - 1).
  const int64_t i = (slot + 1) / 2;
  if (slot == 0 || (slot % 2 == 1 && i < chunks)) return "before waiting for dispatch " + std::to_string(i);
  return "before waiting for combine " + std::to_string((slot - 1) / 2);
}

void validate(const ScheduleInputs& in) {
  const int P = in.ranks;
  if (P < 2)
    throw std::invalid_argument(
        "ranks: the planner schedules expert-parallel communication: it needs 2 or more "
        "ranks, got " +
        std::to_string(P));
  if (in.experts < P || in.experts % P != 0)
    throw std::invalid_argument("experts: " + std::to_string(in.experts) + " experts for " + std::to_string(P) +
                                " ranks: the planner needs the same number, at least one, of experts on every rank");
  if (!in.link.active())
    throw std::invalid_argument("link_gbps: the planner models a link: its bandwidth must be > 0, got " +
                                std::to_string(in.link.gbps));
  if (in.row_bytes == 0) throw std::invalid_argument("hidden: a row of 0 bytes");
  if (in.counts.size() != static_cast<size_t>(P * in.experts))
    throw std::invalid_argument("counts: " + std::to_string(in.counts.size()) + " for " + std::to_string(P) +
                                " ranks of " + std::to_string(in.experts) + " experts");
  if (std::any_of(in.counts.begin(), in.counts.end(), [](int64_t n) { return n < 0; }))
    throw std::invalid_argument("counts: a negative row count");
  for (const DirectionTimes& t : in.times) {
    expect_times(t.expert_s, static_cast<size_t>(in.experts), "expert_s");
    expect_times(t.shared_s, P, "shared_s");
    expect_times(t.other_s, P, "other_s");
  }
}

PipelineTasks pipeline_tasks(const ScheduleInputs& in, int dir, int64_t chunks) {
  const int P = in.ranks;
  const int64_t C = chunks, L = in.experts / P;
  const DirectionTimes& times = in.times[dir];
  PipelineTasks t;
  t.ranks = P, t.chunks = C;
  t.compute.assign(P * C, 0), t.dispatch.assign(P * C, 0), t.combine.assign(P * C, 0);
  t.shared_s = times.shared_s, t.other_s = times.other_s;
  std::vector<size_t> sent(P), received(P);
  for (int r = 0; r < P; ++r) {
    const ChunkPlan plan = plan_chunks(in.counts, P, r, L, C);
    for (int64_t i = 0; i < C; ++i) {
      for (int64_t j = plan.first_expert(r, i); j < plan.first_expert(r, i + 1); ++j)
        t.compute[r * C + i] += times.expert_s[r * L + j];
      for (int q = 0; q < P; ++q)
        sent[q] = plan.send_rows(i, q) * in.row_bytes, received[q] = plan.recv_rows(i, q) * in.row_bytes;
      t.dispatch[r * C + i] = in.link.alltoallv_s(sent, received, r);
      for (int q = 0; q < P; ++q)
        sent[q] = plan.combine_rows(q, r, i) * in.row_bytes, received[q] = plan.combine_rows(r, q, i) * in.row_bytes;
      t.combine[r * C + i] = in.link.alltoallv_s(sent, received, r);
    }
  }
  return t;
}

double direction_s(const PipelineTasks& t, int64_t slot) {
  const int P = t.ranks;
  const int64_t C = t.chunks;
  std::vector<double> now(P, 0.0), dispatch_start(P * C, 0.0), combine_start(P * C, 0.0);
  int64_t waits = 0;
  // Every rank waits for all-to-all c, started at start[c * P + r]: it completes at the rank's start plus its
  // link time, and not before the last rank has started it. The shared experts run just before wait `slot`.
  auto wait = [&](const std::vector<double>& start, const std::vector<double>& link, int64_t c) {
    const double last = *std::max_element(start.begin() + c * P, start.begin() + (c + 1) * P);
    const bool side = waits++ == slot;
    for (int r = 0; r < P; ++r) {
      if (side) now[r] += t.shared_s[r];
      now[r] = std::max({now[r], start[c * P + r] + link[r * C + c], last});
    }
  };
  for (int64_t i = 0; i < C; ++i) {
    if (i + 1 < C)
      for (int r = 0; r < P; ++r) dispatch_start[(i + 1) * P + r] = now[r];
    wait(dispatch_start, t.dispatch, i);
    for (int r = 0; r < P; ++r) now[r] += t.compute[r * C + i], combine_start[i * P + r] = now[r];
    if (i > 0) wait(combine_start, t.combine, i - 1);
  }
  wait(combine_start, t.combine, C - 1);
  double slowest = 0;
  for (int r = 0; r < P; ++r) {
    if (slot < 0 || slot >= waits) now[r] += t.shared_s[r];
    slowest = std::max(slowest, t.other_s[r] + now[r]);
  }
  return slowest;
}

double predict_step_s(const ScheduleInputs& in, const Schedule& s) {
  validate(in);
  double step = 0;
  for (int dir = 0; dir < 2; ++dir) step += direction_s(pipeline_tasks(in, dir, s.chunks), s.shared_slot[dir]);
  return step;
}

PlanResult choose_schedule(const ScheduleInputs& in, int64_t max_chunks, double min_gain) {
  validate(in);
  if (max_chunks < 1 || max_chunks > kMaxChunks)
    throw std::invalid_argument("chunks: the planner's bound " + std::to_string(max_chunks) + " must lie in [1, " +
                                std::to_string(kMaxChunks) + "]");
  if (!(min_gain >= 0 && min_gain < 1))
    throw std::invalid_argument("min_gain: " + shortest(min_gain) + " must lie in [0, 1)");
  PlanResult best;
  best.predicted_s = INFINITY;
  for (int64_t C = 1; C <= max_chunks; ++C) {
    Schedule s;
    s.chunks = C;
    double step = 0;
    for (int dir = 0; dir < 2; ++dir) {
      const PipelineTasks tasks = pipeline_tasks(in, dir, C);
      double least = direction_s(tasks, -1);
      if (C == 1) best.sequential_s += least;
      for (int64_t slot = 0; slot < pipeline_waits(C); ++slot)
        if (const double t = direction_s(tasks, slot); t < least) least = t, s.shared_slot[dir] = slot;
      step += least;
    }
    best.best_by_chunks.push_back(step);
    if (step < best.predicted_s) best.schedule = s, best.predicted_s = step;
  }
  best.best = best.schedule, best.best_s = best.predicted_s;
  if (best.predicted_s > best.sequential_s * (1 - min_gain)) {
    best.kept_sequential = best.predicted_s < best.sequential_s;
    best.schedule = {}, best.predicted_s = best.sequential_s;
  }
  return best;
}

}  // namespace mlsb::moe_train
