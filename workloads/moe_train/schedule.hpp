#pragma once
// A FinDEP-style schedule planner for the expert-parallel layer's chunked pipeline (overlap.hpp,
// EpExchange::chunked): from task times measured on the ranks, the rows each rank routes and a modelled link,
// the chunk count and the place of the shared experts' compute that minimise the modelled step.
//
// Source: X. Pan, S. Shi, W. Lin, Y. Wang, Z. Tang, W. Wang, X. Chu, "Efficient MoE Inference with
// Fine-Grained Scheduling of Disaggregated Expert Parallelism" (FinDEP), arXiv 2512.21487, December 2025. FinDEP
// (1) partitions the computation and communication of an MoE layer, with or without shared experts, into
// smaller tasks that pipeline, (2) formulates the schedule as an optimisation over the partition granularity
// and the order of the tasks, and (3) solves it without searching the whole space. Here:
//  - Tasks, per direction (forward, backward): the dispatch all-to-allv of chunk c, the compute of the local
//    experts whose rows have all arrived by step i, the combine all-to-allv of step i, the shared experts'
//    compute. Simplified: FinDEP's attention group (attention, shared experts) and expert group (routed experts)
//    are different GPUs joined by A2E/E2A communication; under expert parallelism each rank is both, so a rank
//    has one compute resource (its main thread) beside the link.
//  - Granularity: the chunk count C in [1, kMaxChunks], rows cut as overlap.hpp cuts them (experts compute
//    whole, so a step computes the experts completed by then, not a C-th of the work).
//  - Order: the executor fixes the order of dispatches, expert compute and combines (step i starts dispatch
//    i+1, waits for dispatch i, computes, starts combine i, waits for combine i-1); what a plan chooses is
//    where the shared experts compute, per direction (EpOptions::shared_slot).
//  - Task times are measured on the ranks in the same run (PipelinePieces), not fitted models of the token
//    count; the link is the alpha-beta model the executor waits out (LinkModel::alltoallv_s): an all-to-all
//    completes at its start plus its modelled time on the rank, and not before every rank has started it;
//    all-to-alls in flight together do not slow each other (the executor waits each out on its own).
//  - Objective: the training step, forward + backward, a direction lasting as long as its slowest rank (ranks
//    meet in every all-to-all); FinDEP maximises inference throughput.
// Solver: given C, the step separates by direction, and one direction's time under an order is a recurrence
// over the C steps of every rank (O(C * ranks)). Running the shared experts earlier than just before the next
// wait only delays what follows (a start moved earlier never makes anything later), and running them after the
// last wait is no better than just before it, so the places to try are the 2C waits (pipeline_waits). The
// solver evaluates them for every C and direction, O(kMaxChunks^3 * ranks) in all, where searching every order
// of the tasks grows exponentially; the unit tests check it against such a search on small instances.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "backends/comm/link_model.hpp"
#include "workloads/moe_train/overlap.hpp"

namespace mlsb::moe_train {

/// One direction's measured task times, seconds per step.
struct DirectionTimes {
  std::vector<double> expert_s;  ///< [ranks][local experts]: each local expert's compute
  std::vector<double> shared_s;  ///< [ranks]: the shared experts' compute (0 without)
  /// [ranks]: the rest of the direction, which no schedule changes: router, routing, permutes, combine, the
  /// pipeline's copies, the exchange of counts and the gradient allreduce.
  std::vector<double> other_s;
};

/// What the planner knows of one layer on its ranks.
struct ScheduleInputs {
  int ranks = 0;
  int64_t experts = 0;                  ///< E, split evenly over the ranks
  std::vector<int64_t> counts;          ///< every rank's rows per global expert after capacity, [ranks][experts]
  size_t row_bytes = 0;                 ///< one row on the wire (hidden * sizeof(element))
  comm::LinkModel link;                 ///< the modelled link (active)
  std::array<DirectionTimes, 2> times;  ///< forward, backward
};

/// A plan: the chunk count and, per direction, where the shared experts compute (EpOptions's fields).
struct Schedule {
  int64_t chunks = 1;
  std::array<int64_t, 2> shared_slot = {-1, -1};
};

/// Where slot `slot` of a pipeline of `chunks` steps runs the shared experts, in words: "before waiting for
/// dispatch 0", "... for combine 3", or "after the pipeline" (-1).
std::string shared_place(int64_t chunks, int64_t slot);

/// One direction's tasks in a pipeline of `chunks` steps, seconds, every rank [rank][step].
struct PipelineTasks {
  int ranks = 0;
  int64_t chunks = 0;
  std::vector<double> compute;            ///< the local experts computed at step i
  std::vector<double> dispatch;           ///< modelled link time of dispatch c on the rank
  std::vector<double> combine;            ///< modelled link time of combine i on the rank
  std::vector<double> shared_s, other_s;  ///< [rank]
};

/// Throws std::invalid_argument naming the parameter: ranks < 2 ("ranks: ..."), experts fewer than ranks or not
/// divisible by them ("experts: ..."), an inactive link ("link_gbps: ..."), counts or times of the wrong size,
/// negative or not finite.
void validate(const ScheduleInputs& in);

/// The tasks of direction `dir` (0 forward, 1 backward) cut into `chunks` steps (plan_chunks of every rank).
PipelineTasks pipeline_tasks(const ScheduleInputs& in, int dir, int64_t chunks);

/// Modelled seconds of a direction under the executor's order with the shared experts before wait `slot`
/// (-1: after the pipeline): the slowest rank's other_s + pipeline.
double direction_s(const PipelineTasks& t, int64_t slot);

/// Modelled seconds of one step (forward + backward) under `s`. Validates as validate().
double predict_step_s(const ScheduleInputs& in, const Schedule& s);

struct PlanResult {
  Schedule schedule;
  double predicted_s = 0;              ///< predict_step_s of the schedule
  double sequential_s = 0;             ///< predict_step_s of the sequential order: one chunk, the shared experts after
  std::vector<double> best_by_chunks;  ///< [C - 1]: the least predicted step with C chunks
  Schedule best;                       ///< the schedule of least predicted step, before min_gain is applied
  double best_s = 0;                   ///< its predicted step
  bool kept_sequential = false;        ///< min_gain kept the sequential order although `best` was predicted faster
};

/// The schedule of least predicted step over chunk counts 1..max_chunks and every shared-expert place; ties go
/// to fewer chunks, then to the shared experts after the pipeline, then to the earlier wait. When that step is
/// not at least `min_gain` (a fraction) below the sequential order's, the plan is the sequential order: the
/// model leaves out what the transport in flight costs the compute beside it. Validates as validate();
/// max_chunks must lie in [1, kMaxChunks] ("chunks: ..."), min_gain in [0, 1) ("min_gain: ...").
PlanResult choose_schedule(const ScheduleInputs& in, int64_t max_chunks = kMaxChunks, double min_gain = 0);

}  // namespace mlsb::moe_train
