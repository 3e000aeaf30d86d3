#pragma once
// MoE Parallel Folding (Liu et al., "MoE Parallel Folding", arXiv 2504.14960; Megatron-Core): the attention
// part of a layer is parallelised as TP x CP x DP x PP and the MoE part of the same layer as ETP x EP x EDP x PP,
// over the same ranks, only PP shared. The rank groups follow Megatron-LM's generator
// (megatron/core/parallel_state.py: RankGenerator, generate_masked_orthogonal_rank_groups, and
// initialize_model_parallel's two generators: attention with ep = 1, experts with cp = 1), so a mapping
// named here puts every rank in the group Megatron would.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mlsb::moe_train::fold {

/// Megatron's default rank order: TP fastest (adjacent ranks), then CP, EP, DP, PP slowest.
constexpr std::string_view kDefaultOrder = "tp-cp-ep-dp-pp";

/// The groups of ranks of `world` ranks laid out in `sizes` (the parallel sizes in rank order, fastest first;
/// their product is the world) that vary the dimensions where `mask` is true and fix the others: one group per
/// combination of the fixed dimensions, ranks in each group in the order of the varied dimensions
/// (generate_masked_orthogonal_rank_groups). Throws std::invalid_argument when sizes and mask differ in
/// length or the sizes' product is not `world`.
std::vector<std::vector<int>> masked_orthogonal_groups(int world, const std::vector<int>& sizes,
                                                       const std::vector<bool>& mask);

/// Megatron's RankGenerator: sizes named tp, cp, ep, dp, pp laid out in `order` (names joined by '-', any
/// permutation; a name left out of the order is appended when its size is 1).
class RankGenerator {
 public:
  /// Throws std::invalid_argument "order: ..." for an unknown or repeated name, or a name left out whose
  /// size is not 1, and "ep: ..." when both ep and cp exceed 1 (Megatron builds the attention groups with
  /// ep = 1 and the expert groups with cp = 1: EP and CP never share a generator).
  RankGenerator(int tp, int cp, int ep, int dp, int pp, std::string_view order);
  /// The groups of `names` ("tp", "dp", "tp-ep", "dp-cp", ...: the dimensions that vary inside a group).
  /// Throws std::invalid_argument for a name not in the order.
  std::vector<std::vector<int>> groups(std::string_view names) const;
  int world() const { return world_; }
  const std::string& order() const { return order_; }

 private:
  std::vector<std::string> names_;  // in rank order
  std::vector<int> sizes_;
  std::string order_;
  int world_ = 1;
};

/// The kinds of group a rank of a folded layer belongs to.
enum class Group {
  Tp,    ///< attention tensor parallel (and sequence parallel)
  Cp,    ///< context parallel
  Dp,    ///< attention data parallel
  DpCp,  ///< DP x CP: the dense parameters' gradient reduction
  Etp,   ///< expert tensor parallel
  Ep,    ///< expert parallel
  TpEp,  ///< ETP x EP: where the dispatcher's counts are gathered
  Edp,   ///< expert data parallel: the expert parameters' gradient reduction
  Pp,    ///< pipeline stages (shared by both parts)
};
constexpr int kGroupKinds = 9;
std::string_view to_string(Group g);  ///< "tp", "cp", "dp", "dp_cp", "etp", "ep", "tp_ep", "edp", "pp"

/// One mapping of a world of ranks: sizes of both parts and the rank order.
struct Mapping {
  int world = 1;
  int tp = 1, cp = 1, dp = 1, pp = 1;  ///< attention: TP x CP x DP x PP = world
  int etp = 1, ep = 1, edp = 1;        ///< MoE: ETP x EP x EDP x PP = world
  std::string order = std::string(kDefaultOrder);

  /// Legacy (unfolded) mapping: expert TP equals TP and EP lies inside DP (Megatron before folding:
  /// EP a divisor of DP, ETP = TP, CP = 1 or EP over DP x CP).
  bool legacy() const { return etp == tp && dp % ep == 0; }
  /// "tp2 cp1 dp4 | etp1 ep8 edp1" (and " order=..." when not the default).
  std::string label() const;
};

/// The mapping of `world` ranks with these sizes; dp = world / (tp cp pp) and edp = world / (etp ep pp) derived.
/// Throws std::invalid_argument naming the axis and the rule: a size < 1 ("tp: must be >= 1"), a world the
/// product does not divide ("tp: tp x cp x pp = 6 does not divide the 8 ranks"), the order (RankGenerator's
/// rules), or, when the order does not end with pp and pp > 1, dp != edp (Megatron's rule), or the two parts'
/// pipeline groups differing.
Mapping make_mapping(int world, int tp, int cp, int etp, int ep, int pp, std::string_view order);

/// Throws std::invalid_argument naming the axis when the model cannot be split by `m`: experts not divisible
/// by ep ("ep: ..."), ffn not divisible by etp ("etp: ..."), heads not divisible by tp ("tp: ..."), or the
/// tokens of one sequence-parallel shard (`seq` / cp / tp per sequence) not whole ("seq: ...").
void check_model(const Mapping& m, int64_t experts, int64_t ffn, int64_t heads, int64_t seq);

/// Every group of every kind, and one rank's place in them.
struct Groups {
  std::array<std::vector<std::vector<int>>, kGroupKinds> of;  ///< of[Group]: the groups of that kind

  /// The group of kind `g` that holds `rank`, in group order (its index there is the rank's index in
  /// the group). Throws std::out_of_range when no group holds it.
  const std::vector<int>& containing(Group g, int rank) const;
  /// The index of `rank` in containing(g, rank).
  int index_of(Group g, int rank) const;
  /// "tp: [0,1] [2,3] ..." per kind, one line each (what --dry-run prints).
  std::string describe() const;
};
Groups make_groups(const Mapping& m);

/// Every legal mapping of `world` ranks for the model (check_model passes), pp = 1, the default order:
/// tp, cp, etp, ep over the divisors of the world, cp > 1 only when `allow_cp`.
std::vector<Mapping> legal_mappings(int world, int64_t experts, int64_t ffn, int64_t heads, int64_t seq,
                                    bool allow_cp);

}  // namespace mlsb::moe_train::fold
