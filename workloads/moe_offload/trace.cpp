#include "workloads/moe_offload/trace.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <stdexcept>
#include <tuple>

#include "util/json_parse.hpp"

namespace mlsb::moe_offload {
namespace {

using nlohmann::json;

constexpr int64_t kMaxExperts = 65536, kMaxLayers = 4096;  // the workload's experts and layers axes

struct Record {
  std::vector<int32_t> experts;
  std::vector<float> weights;
  int64_t token_id = -1;
  int64_t line = 0;
};

// (sequence key, position) -> layer -> record; the sequence key is (step, seq).
using TokenKey = std::tuple<int64_t, int64_t, int64_t>;

class Loader {
 public:
  explicit Loader(std::string path) : path_(std::move(path)) {}

  RoutingTrace load() {
    std::ifstream in(path_);
    if (std::filesystem::is_directory(path_)) throw std::runtime_error("trace " + path_ + ": is a folder, not a file");
    if (!in) throw std::runtime_error("trace " + path_ + ": cannot be read");
    std::string text;
    int64_t line = 0;
    while (std::getline(in, text)) {
      ++line;
      if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
      json j;
      try {
        j = parse_json_limited(text, 8);
      } catch (const json::parse_error& e) {
        fail(line, "not a JSON record (column " + std::to_string(e.byte) + ": " + json_syntax_error(e) + ")" +
                       (in.peek() == EOF ? "; the file may be truncated" : ""));
      } catch (const std::exception& e) {
        fail(line, "not a JSON record (" + std::string(e.what()) + ")");
      }
      if (!j.is_object()) fail(line, "not a JSON object");
      if (j.contains("format")) {
        header(j, line);
        continue;
      }
      record(j, line);
    }
    if (records_.empty()) throw std::runtime_error("trace " + path_ + ": no routing records");
    return assemble();
  }

 private:
  [[noreturn]] void fail(int64_t line, const std::string& what) const {
    throw std::runtime_error("trace " + path_ + " line " + std::to_string(line) + ": " + what);
  }

  int64_t integer(const json& j, const char* field, int64_t line, bool required, int64_t fallback = 0) const {
    const auto it = j.find(field);
    if (it == j.end()) {
      if (required) fail(line, std::string("missing field '") + field + "'");
      return fallback;
    }
    if (!it->is_number_integer()) fail(line, std::string("field '") + field + "' is not an integer");
    if (it->is_number_unsigned() && it->get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      fail(line, std::string("field '") + field + "' is " + std::to_string(it->get<uint64_t>()) + ", too large");
    const int64_t v = it->get<int64_t>();
    if (v < 0) fail(line, std::string("field '") + field + "' is negative");
    return v;
  }

  void header(const json& j, int64_t line) {
    if (line != 1 || !records_.empty()) fail(line, "a header line may only be the first line");
    if (j["format"] != "mlsysbench-routing-trace") fail(line, "field 'format' is not \"mlsysbench-routing-trace\"");
    if (integer(j, "version", line, true) != 1) fail(line, "field 'version': only version 1 is known");
    header_layers_ = integer(j, "layers", line, true);
    header_experts_ = integer(j, "experts", line, true);
    topk_ = integer(j, "topk", line, true);
    if (header_layers_ < 1 || header_layers_ > kMaxLayers)
      fail(line, "field 'layers' is " + std::to_string(header_layers_) + ", not in [1, " + std::to_string(kMaxLayers) + "]");
    if (header_experts_ < 1 || header_experts_ > kMaxExperts)
      fail(line, "field 'experts' is " + std::to_string(header_experts_) + ", not in [1, " + std::to_string(kMaxExperts) + "]");
    if (topk_ < 1 || topk_ > header_experts_)
      fail(line, "field 'topk' is " + std::to_string(topk_) + ", not in [1, experts = " + std::to_string(header_experts_) + "]");
    moe_train_ = true;
    source_ = j;
  }

  void record(const json& j, int64_t line) {
    const int64_t layer = integer(j, "layer", line, true);
    int64_t step = 0, seq = 0, pos = 0, token_id = -1;
    if (moe_train_) {
      step = integer(j, "step", line, true);
      seq = integer(j, "seq", line, true);
      pos = integer(j, "pos", line, true);
      token_id = integer(j, "token", line, false, -1);
      if (j.contains("token_id"))
        fail(line, "field 'token_id' belongs to the plain format; moe_train's records give the vocabulary id as 'token'");
    } else {
      seq = integer(j, "seq", line, false);
      pos = integer(j, "token", line, true);
      token_id = integer(j, "token_id", line, false, -1);
    }
    const std::string id_field = moe_train_ ? "token" : "token_id";
    if (token_id > std::numeric_limits<int32_t>::max())
      fail(line, "field '" + id_field + "' (the vocabulary id) is " + std::to_string(token_id) + ", more than " +
                     std::to_string(std::numeric_limits<int32_t>::max()));
    if (layer >= kMaxLayers)
      fail(line, "layer " + std::to_string(layer) + " exceeds " + std::to_string(kMaxLayers - 1) + " (at most " +
                     std::to_string(kMaxLayers) + " MoE layers)");
    if (header_layers_ > 0 && layer >= header_layers_)
      fail(line, "layer " + std::to_string(layer) + " >= the header's layers (" + std::to_string(header_layers_) + ")");
    const auto ex = j.find("experts");
    if (ex == j.end()) fail(line, "missing field 'experts'");
    if (!ex->is_array() || ex->empty()) fail(line, "field 'experts' is not a non-empty array");
    Record r;
    r.line = line;
    r.token_id = token_id;
    for (const auto& e : *ex) {
      if (!e.is_number_integer() || e.get<int64_t>() < 0) fail(line, "field 'experts' holds a non-integer or negative id");
      const int64_t id = e.get<int64_t>();
      if (header_experts_ > 0 && id >= header_experts_)
        fail(line, "expert id " + std::to_string(id) + " >= the header's experts (" + std::to_string(header_experts_) + ")");
      if (id >= kMaxExperts)
        fail(line, "expert id " + std::to_string(id) + " exceeds " + std::to_string(kMaxExperts - 1) +
                       " (a layer has at most " + std::to_string(kMaxExperts) + " experts)");
      if (std::find(r.experts.begin(), r.experts.end(), id) != r.experts.end())
        fail(line, "field 'experts' repeats expert " + std::to_string(id));
      r.experts.push_back(static_cast<int32_t>(id));
      if (id > max_expert_) max_expert_ = id, max_expert_line_ = line;
    }
    if (topk_ == 0) topk_ = static_cast<int64_t>(r.experts.size());
    if (static_cast<int64_t>(r.experts.size()) != topk_)
      fail(line, "field 'experts' has " + std::to_string(r.experts.size()) + " ids, the trace's top-k is " +
                     std::to_string(topk_));
    if (const auto w = j.find("weights"); w != j.end()) {
      if (!w->is_array() || w->size() != r.experts.size()) fail(line, "field 'weights' is not an array of top-k numbers");
      for (const auto& x : *w) {
        if (!x.is_number()) fail(line, "field 'weights' holds a non-number");
        r.weights.push_back(x.get<float>());
      }
    }
    auto& layers = records_[{step, seq, pos}];
    if (!layers.empty() && layers.begin()->second.token_id != token_id) {
      const Record& other = layers.begin()->second;
      const auto given = [](int64_t v) { return v < 0 ? std::string("none") : std::to_string(v); };
      fail(line, "field '" + id_field + "' (the vocabulary id) is " + (token_id < 0 ? "missing" : std::to_string(token_id)) +
                     ", but this token's record on line " + std::to_string(other.line) + " gives " +
                     given(other.token_id) + " (a token has one id on all its layers)");
    }
    if (!layers.emplace(layer, std::move(r)).second)
      fail(line, "a second record for layer " + std::to_string(layer) + " of the same token");
    max_layer_ = std::max(max_layer_, layer);
  }

  RoutingTrace assemble() const {
    RoutingTrace t;
    t.layers = header_layers_ > 0 ? header_layers_ : max_layer_ + 1;
    t.experts = header_experts_ > 0 ? header_experts_ : max_expert_ + 1;
    t.topk = topk_;
    t.max_expert_line = max_expert_line_;
    t.source = json::object();
    t.source["file"] = path_;
    if (moe_train_) t.source["header"] = source_;
    t.route.reserve(records_.size() * t.layers * t.topk);
    t.weights.reserve(t.route.capacity());
    t.seq_start.clear();
    std::pair<int64_t, int64_t> current{-1, -1};
    int64_t token = 0;
    for (const auto& [key, layers] : records_) {
      const std::pair<int64_t, int64_t> seq{std::get<0>(key), std::get<1>(key)};
      if (seq != current) t.seq_start.push_back(token), current = seq;
      t.token_id.push_back(static_cast<int32_t>(layers.begin()->second.token_id));
      for (int64_t l = 0; l < t.layers; ++l) {
        const auto it = layers.find(l);
        if (it == layers.end()) {
          const int64_t line = layers.begin()->second.line;
          throw std::runtime_error("trace " + path_ + " line " + std::to_string(line) + ": the token of this record has no record for layer " +
                                   std::to_string(l) + " (the file may be truncated)");
        }
        const Record& r = it->second;
        t.route.insert(t.route.end(), r.experts.begin(), r.experts.end());
        if (r.weights.empty()) t.weights.insert(t.weights.end(), t.topk, 1.0f / static_cast<float>(t.topk));
        else t.weights.insert(t.weights.end(), r.weights.begin(), r.weights.end());
      }
      ++token;
    }
    t.seq_start.push_back(token);
    return t;
  }

  std::string path_;
  bool moe_train_ = false;
  json source_;
  int64_t header_layers_ = 0, header_experts_ = 0, topk_ = 0;
  int64_t max_layer_ = -1, max_expert_ = -1, max_expert_line_ = 0;
  std::map<TokenKey, std::map<int64_t, Record>> records_;
};

}  // namespace

RoutingTrace load_trace(const std::string& path) { return Loader(path).load(); }

void check_against_model(const RoutingTrace& t, int64_t layers, int64_t experts) {
  if (t.layers != layers)
    throw std::invalid_argument("trace: " + std::to_string(t.layers) + " layers but the model has " +
                                std::to_string(layers) + " (layers)");
  if (t.topk > experts)
    throw std::invalid_argument("trace: top-k " + std::to_string(t.topk) + " exceeds the model's experts (" +
                                std::to_string(experts) + ")");
  if (!t.token_id.empty() && static_cast<int64_t>(t.token_id.size()) != t.tokens())
    throw std::invalid_argument("trace: token_id has " + std::to_string(t.token_id.size()) + " entries for " +
                                std::to_string(t.tokens()) + " tokens");
  const int64_t max_id = t.route.empty() ? -1 : *std::max_element(t.route.begin(), t.route.end());
  if (max_id >= experts)
    throw std::invalid_argument("trace: expert id " + std::to_string(max_id) +
                                (t.max_expert_line > 0 ? " (line " + std::to_string(t.max_expert_line) + ")" : "") +
                                " exceeds the model's experts (" + std::to_string(experts) + ")");
}

}  // namespace mlsb::moe_offload
