#pragma once
// Routing traces: which experts each token of each layer chose, for the expert-offloading workload to
// replay. JSON lines; the first line is a header:
//   {"format": "mlsysbench-routing-trace", "version": 1, "layers": L, "experts": E, "topk": k,
//    "seq": S, "source": "..."}
// then one line per token and layer of a traced step:
//   {"step": s, "layer": l, "seq": b, "pos": p, "token": byte, "experts": [e0, ...], "weights": [w0, ...]}
// with the experts by decreasing selection score and the weights rounded to 1e-6.
#include <cstdint>
#include <fstream>
#include <string>

#include "workloads/moe_train/router.hpp"

namespace mlsb::moe_train {

class RoutingTraceWriter {
 public:
  /// Creates `path` and writes the header. An existing file is replaced only when it is a routing trace
  /// itself (its first line is a trace header), so a mistyped path never overwrites a store, a corpus
  /// or any other file. Throws std::runtime_error("trace_out: ...") naming the path otherwise, or when
  /// the file cannot be written.
  RoutingTraceWriter(const std::string& path, int64_t layers, const MoeConfig& c, int64_t seq,
                     const std::string& source);
  /// One layer's routing of a step: r.tokens = batch * seq, `tokens` the input bytes [batch, seq + 1];
  /// the batch's sequences are numbered from `first_seq`.
  void write(int64_t step, int64_t layer, const Routing<float>& r, const uint8_t* tokens, int64_t seq,
             int64_t first_seq = 0);
  int64_t lines() const { return lines_; }
  /// True when an earlier trace at the path was replaced.
  bool replaced() const { return replaced_; }

 private:
  std::string path_;
  std::ofstream out_;
  int64_t lines_ = 0;
  bool replaced_ = false;
};

}  // namespace mlsb::moe_train
