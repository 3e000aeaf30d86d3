#pragma once
// What moe_train.block records per step: step and phase times, each reported group's collective time and bytes,
// cross-node bytes, throughput and MFU (Megatron's FLOPs of the block), all agreed over the ranks.
#include <array>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "backends/comm/communicator.hpp"
#include "harness/workload.hpp"
#include "workloads/moe_train/cpu_peak.hpp"
#include "workloads/moe_train/fold/block.hpp"

namespace mlsb::moe_train::fold {

/// The reported groups and the stem of their metrics: tp, cp, ep (the row all-to-alls and the token counts'
/// all-gather over ETP x EP), etp, edp, dp (the DP x CP gradient reduction).
constexpr std::array<std::pair<Group, std::string_view>, 6> kReportedGroups = {{{Group::Tp, "tp"},
                                                                               {Group::Cp, "cp"},
                                                                               {Group::Ep, "ep"},
                                                                               {Group::Etp, "etp"},
                                                                               {Group::Edp, "edp"},
                                                                               {Group::DpCp, "dp"}}};

/// The block's metrics: step_ms (primary), forward_ms, backward_ms, grad_sync_ms, comm_ms, compute_ms,
/// <group>_comm_ms and <group>_bytes for each reported group, cross_node_bytes, model_tflops, tokens_per_s,
/// mfu, peak_tflops, dropped_fraction (the moe_train family's names; step_ms, comm_ms, compute_ms and
/// model_tflops with the block's meaning: no optimizer, time in the groups' collectives, FLOPs per step).
std::vector<Metric> block_metrics();

/// Model FLOPs of the block's forward and backward over the global batch (Megatron-LM's count,
/// num_floating_point_operations: attention_flop + moe_layer_flop, flops.hpp).
double block_flop(const BlockConfig& c);

/// Records one step of a folded block (its `times` and its groups' traffic since they were cleared, the assignments
/// its capacity `dropped`), `step_s` on this rank; every rank calls it (the values are agreed over `world`: max for
/// times and bytes). `peak`: the CPU GEMM peak, measured again when the expert GEMMs beat it (not used under a
/// counting instrument); nullptr (a GPU block) records no peak_tflops and no mfu.
void record_block_step(State& state, comm::Communicator& world, const BlockConfig& c, const Mapping& m,
                       const BlockTimes& times, int64_t dropped, RankComms& comms, double step_s, CpuPeak* peak);

/// The mapping as an item: sizes, order, legacy or folded, and every kind's groups.
nlohmann::json mapping_json(const Mapping& m, const Groups& g);

}  // namespace mlsb::moe_train::fold
