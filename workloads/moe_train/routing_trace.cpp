#include "workloads/moe_train/routing_trace.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace mlsb::moe_train {

RoutingTraceWriter::RoutingTraceWriter(const std::string& path, int64_t layers, const MoeConfig& c, int64_t seq,
                                       const std::string& source)
    : path_(path) {
  std::error_code ec;
  if (std::filesystem::exists(path, ec)) {
    std::ifstream in(path, std::ios::binary);
    std::string first(256, '\0');
    in.read(first.data(), static_cast<std::streamsize>(first.size()));
    first.resize(static_cast<size_t>(std::max<std::streamsize>(0, in.gcount())));
    if (!std::filesystem::is_regular_file(path, ec) ||
        first.find("\"format\":\"mlsysbench-routing-trace\"") == std::string::npos)
      throw std::runtime_error("trace_out: " + path + " exists and is not a routing trace; refusing to overwrite it");
    replaced_ = true;
  }
  out_.open(path, std::ios::trunc);
  if (!out_) throw std::runtime_error("trace_out: cannot create " + path);
  out_ << nlohmann::json{{"format", "mlsysbench-routing-trace"}, {"version", 1}, {"layers", layers},
                         {"experts", c.experts}, {"topk", c.topk}, {"seq", seq}, {"source", source}}
              .dump()
       << "\n";
}

void RoutingTraceWriter::write(int64_t step, int64_t layer, const Routing<float>& r, const uint8_t* tokens,
                               int64_t seq, int64_t first_seq) {
  for (int64_t t = 0; t < r.tokens; ++t) {
    const int64_t b = t / seq, p = t % seq;
    nlohmann::json e = nlohmann::json::array(), w = nlohmann::json::array();
    for (int64_t j = 0; j < r.topk; ++j) e.push_back(r.expert[t * r.topk + j]), w.push_back(std::round(double(r.weight[t * r.topk + j]) * 1e6) / 1e6);
    out_ << nlohmann::json{{"step", step}, {"layer", layer}, {"seq", first_seq + b}, {"pos", p},
                           {"token", tokens[b * (seq + 1) + p]}, {"experts", e}, {"weights", w}}
                .dump()
         << "\n";
    ++lines_;
  }
  if (!out_) throw std::runtime_error("trace_out: writing " + path_ + " failed");
}

}  // namespace mlsb::moe_train
