#pragma once
// Routing traces: which experts every token needs at every MoE layer, grouped into sequences.
//
// Two JSON-lines files load:
//  - the file `moe_train -p mode=lm -p trace_out=FILE` records: a header line
//      {"format": "mlsysbench-routing-trace", "version": 1, "layers": L, "experts": E, "topk": k, ...}
//    then {"step", "layer", "seq", "pos", "token", "experts": [...], "weights": [...]} per token and
//    layer; a sequence is one (step, seq) pair, its tokens ordered by pos, `token` (optional) the
//    vocabulary id;
//  - a plain file without a header: {"seq": s (optional, default 0), "token": t, "layer": l,
//    "experts": [e0, ...], "weights": [w0, ...] (optional), "token_id": v (optional)} per token and
//    layer, `token` being the position within its sequence and `token_id` the vocabulary id.
// Records may come in any order; every token needs a record for each layer 0..L-1, all with k
// distinct experts and the same vocabulary id.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace mlsb::moe_offload {

struct RoutingTrace {
  int64_t layers = 0;   ///< L: MoE layers
  int64_t experts = 0;  ///< E: routed experts per layer (the header's, else 1 + the largest id seen)
  int64_t topk = 0;     ///< k: experts per token and layer
  /// Token index where each sequence starts, then the token count: size sequences() + 1.
  std::vector<int64_t> seq_start{0};
  std::vector<int32_t> route;   ///< expert ids [tokens][layers][topk]
  std::vector<float> weights;   ///< combine weights, same shape (1/k each where the file gave none)
  /// [tokens] vocabulary id, -1 where the file gives none; or empty (synthetic traces): no ids at all.
  std::vector<int32_t> token_id;
  /// Where it came from: {"file": path, ...} for a loaded trace, the generator's parameters for a
  /// synthetic one. Recorded with the run.
  nlohmann::json source = nlohmann::json::object();
  /// For a loaded file: the line of the record holding the largest expert id (for error messages).
  int64_t max_expert_line = 0;

  int64_t tokens() const { return seq_start.back(); }
  int64_t sequences() const { return static_cast<int64_t>(seq_start.size()) - 1; }
  const int32_t* experts_of(int64_t token, int64_t layer) const { return &route[(token * layers + layer) * topk]; }
  const float* weights_of(int64_t token, int64_t layer) const { return &weights[(token * layers + layer) * topk]; }
  int32_t vocab_id(int64_t token) const { return token_id.empty() ? -1 : token_id[token]; }
};

/// Loads a trace file (either format above). Throws std::runtime_error "trace FILE: ..." for a file
/// that cannot be read or is empty, and "trace FILE line N: ..." naming the field for a malformed or
/// truncated record (not JSON, a missing or non-integer field, k differing between records, a
/// repeated expert, a negative id, an id >= the header's experts or >= 65536, a layer >= 4096, a
/// vocabulary id >= 2^31 or differing between a token's layers, a token missing a layer).
RoutingTrace load_trace(const std::string& path);

/// Checks a trace against the model it is replayed on. Throws std::invalid_argument naming the field:
/// "trace: expert id 9 (line 12) exceeds the model's experts (8)", "trace: 4 layers but the model has 2",
/// "trace: top-k 4 exceeds the model's experts (2)", "trace: token_id has 3 entries for 4 tokens".
void check_against_model(const RoutingTrace& t, int64_t layers, int64_t experts);

}  // namespace mlsb::moe_offload
