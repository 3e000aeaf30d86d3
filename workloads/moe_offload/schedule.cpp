#include "workloads/moe_offload/schedule.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace mlsb::moe_offload {

Phase parse_phase(std::string_view name) {
  if (name == "decode") return Phase::Decode;
  if (name == "prefill") return Phase::Prefill;
  throw std::invalid_argument("phase: unknown '" + std::string(name) + "' (known: decode, prefill)");
}

Schedule make_schedule(const RoutingTrace& t, Phase phase, int64_t batch, int64_t window, int64_t seq_begin,
                       int64_t seq_end) {
  if (batch < 1) throw std::invalid_argument("batch: must be >= 1");
  if (window < 1) throw std::invalid_argument("window: must be >= 1");
  if (seq_begin < 0 || seq_end > t.sequences() || seq_begin > seq_end)
    throw std::invalid_argument("sequences [" + std::to_string(seq_begin) + ", " + std::to_string(seq_end) +
                                ") are not within the trace's " + std::to_string(t.sequences()));
  Schedule s;
  s.batch_start = {0};
  s.window_start = {0};
  auto close_batch = [&] {
    if (static_cast<int64_t>(s.tokens.size()) > s.batch_start.back()) s.batch_start.push_back(s.tokens.size());
  };
  auto close_window = [&] {
    close_batch();
    if (s.batches() > s.window_start.back()) s.window_start.push_back(s.batches());
  };
  if (phase == Phase::Decode) {
    const int64_t group = batch * window;
    for (int64_t g = seq_begin; g < seq_end; g += group) {
      const int64_t g_end = std::min(seq_end, g + group);
      int64_t longest = 0;
      for (int64_t q = g; q < g_end; ++q) longest = std::max(longest, t.seq_start[q + 1] - t.seq_start[q]);
      for (int64_t pos = 0; pos < longest; ++pos) {
        for (int64_t q = g; q < g_end; ++q) {
          if (t.seq_start[q] + pos >= t.seq_start[q + 1]) continue;
          s.tokens.push_back(t.seq_start[q] + pos);
          if (static_cast<int64_t>(s.tokens.size()) - s.batch_start.back() == batch) close_batch();
        }
        close_window();
      }
    }
  } else {
    for (int64_t q = seq_begin; q < seq_end; ++q) {
      for (int64_t tok = t.seq_start[q]; tok < t.seq_start[q + 1]; ++tok) {
        s.tokens.push_back(tok);
        if (static_cast<int64_t>(s.tokens.size()) - s.batch_start.back() == batch) {
          close_batch();
          if (s.batches() - s.window_start.back() == window) close_window();
        }
      }
      close_window();
    }
  }
  return s;
}

LookupStream make_lookups(const RoutingTrace& t, const Schedule& s) {
  LookupStream out;
  out.layers = t.layers;
  out.experts = t.experts;
  out.step_start.reserve(s.batches() * t.layers + 1);
  std::vector<uint32_t> mark(t.experts, 0);
  uint32_t stamp = 0;
  for (int64_t b = 0; b < s.batches(); ++b) {
    for (int64_t l = 0; l < t.layers; ++l) {
      ++stamp;
      const size_t first = out.expert.size();
      for (int64_t i = s.batch_start[b]; i < s.batch_start[b + 1]; ++i) {
        const int32_t* r = t.experts_of(s.tokens[i], l);
        for (int64_t j = 0; j < t.topk; ++j)
          if (mark[r[j]] != stamp) mark[r[j]] = stamp, out.expert.push_back(r[j]);
      }
      std::sort(out.expert.begin() + first, out.expert.end());
      out.step_start.push_back(out.expert.size());
    }
  }
  return out;
}

}  // namespace mlsb::moe_offload
