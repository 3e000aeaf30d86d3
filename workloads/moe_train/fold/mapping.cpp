#include "workloads/moe_train/fold/mapping.hpp"

#include <algorithm>
#include <stdexcept>

#include "util/text.hpp"

namespace mlsb::moe_train::fold {
namespace {

constexpr std::array<std::string_view, 5> kNames = {"tp", "cp", "ep", "dp", "pp"};

std::vector<std::string> split_names(std::string_view s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    const size_t dash = s.find('-', start);
    out.emplace_back(s.substr(start, dash == std::string_view::npos ? std::string_view::npos : dash - start));
    if (dash == std::string_view::npos) break;
    start = dash + 1;
  }
  return out;
}

// The index of a flat `index` along each dimension of `shape` (fastest first).
std::vector<int> decompose(int index, const std::vector<int>& shape) {
  std::vector<int> idx(shape.size());
  for (size_t i = 0; i < shape.size(); ++i) idx[i] = index % shape[i], index /= shape[i];
  return idx;
}

std::string join_group(const std::vector<int>& g) {
  std::string s = "[";
  for (size_t i = 0; i < g.size(); ++i) s += (i ? "," : "") + std::to_string(g[i]);
  return s + "]";
}

std::vector<int> divisors(int n) {
  std::vector<int> d;
  for (int i = 1; i <= n; ++i)
    if (n % i == 0) d.push_back(i);
  return d;
}

}  // namespace

std::vector<std::vector<int>> masked_orthogonal_groups(int world, const std::vector<int>& sizes,
                                                       const std::vector<bool>& mask) {
  if (sizes.size() != mask.size()) throw std::invalid_argument("rank groups: sizes and mask differ in length");
  int product = 1;
  for (int s : sizes) product *= s;
  if (product != world)
    throw std::invalid_argument("rank groups: the sizes multiply to " + std::to_string(product) + ", not the " +
                                std::to_string(world) + " ranks");
  // The stride of each dimension in the world's rank numbering, and the varied / fixed dimensions.
  std::vector<int> stride(sizes.size());
  for (size_t i = 0, s = 1; i < sizes.size(); s *= static_cast<size_t>(sizes[i]), ++i) stride[i] = static_cast<int>(s);
  std::vector<int> in_shape, in_stride, out_shape, out_stride;
  for (size_t i = 0; i < sizes.size(); ++i) {
    (mask[i] ? in_shape : out_shape).push_back(sizes[i]);
    (mask[i] ? in_stride : out_stride).push_back(stride[i]);
  }
  int group_size = 1;
  for (int s : in_shape) group_size *= s;
  std::vector<std::vector<int>> groups(static_cast<size_t>(world / group_size));
  for (int g = 0; g < static_cast<int>(groups.size()); ++g) {
    const std::vector<int> gi = decompose(g, out_shape);
    int base = 0;
    for (size_t i = 0; i < gi.size(); ++i) base += gi[i] * out_stride[i];
    for (int r = 0; r < group_size; ++r) {
      const std::vector<int> ri = decompose(r, in_shape);
      int rank = base;
      for (size_t i = 0; i < ri.size(); ++i) rank += ri[i] * in_stride[i];
      groups[static_cast<size_t>(g)].push_back(rank);
    }
  }
  return groups;
}

RankGenerator::RankGenerator(int tp, int cp, int ep, int dp, int pp, std::string_view order) {
  if (ep > 1 && cp > 1)
    throw std::invalid_argument("ep: EP (" + std::to_string(ep) + ") and CP (" + std::to_string(cp) +
                                ") cannot share a rank generator: attention groups take ep = 1, expert groups cp = 1");
  const std::array<int, 5> size = {tp, cp, ep, dp, pp};
  names_ = split_names(order);
  for (const auto& n : names_) {
    if (std::find(kNames.begin(), kNames.end(), n) == kNames.end())
      throw std::invalid_argument("order: unknown name '" + n + "' in '" + std::string(order) +
                                  "' (names: tp, cp, ep, dp, pp joined by '-')");
    if (std::count(names_.begin(), names_.end(), n) > 1)
      throw std::invalid_argument("order: '" + n + "' appears twice in '" + std::string(order) + "'");
  }
  for (size_t i = 0; i < kNames.size(); ++i) {
    if (std::find(names_.begin(), names_.end(), kNames[i]) != names_.end()) continue;
    if (size[i] != 1)
      throw std::invalid_argument("order: '" + std::string(order) + "' leaves out " + std::string(kNames[i]) +
                                  ", whose size is " + std::to_string(size[i]) + " (only a size of 1 may be left out)");
    names_.emplace_back(kNames[i]);
  }
  order_.clear();
  for (const auto& n : names_) {
    order_ += (order_.empty() ? "" : "-") + n;
    const int s = size[static_cast<size_t>(std::find(kNames.begin(), kNames.end(), n) - kNames.begin())];
    sizes_.push_back(s);
    world_ *= s;
  }
}

std::vector<std::vector<int>> RankGenerator::groups(std::string_view names) const {
  std::vector<bool> mask(names_.size(), false);
  for (const auto& n : split_names(names)) {
    const auto it = std::find(names_.begin(), names_.end(), n);
    if (it == names_.end()) throw std::invalid_argument("rank groups: '" + n + "' is not in the order " + order_);
    mask[static_cast<size_t>(it - names_.begin())] = true;
  }
  return masked_orthogonal_groups(world_, sizes_, mask);
}

std::string_view to_string(Group g) {
  constexpr std::array<std::string_view, kGroupKinds> names = {"tp", "cp", "dp", "dp_cp", "etp",
                                                               "ep", "tp_ep", "edp", "pp"};
  return names[static_cast<size_t>(g)];
}

std::string Mapping::label() const {
  std::string s = "tp" + std::to_string(tp) + " cp" + std::to_string(cp) + " dp" + std::to_string(dp) + " | etp" +
                  std::to_string(etp) + " ep" + std::to_string(ep) + " edp" + std::to_string(edp);
  if (pp > 1) s += " pp" + std::to_string(pp);
  if (order != kDefaultOrder) s += " order=" + order;
  return s;
}

Mapping make_mapping(int world, int tp, int cp, int etp, int ep, int pp, std::string_view order) {
  const std::pair<const char*, int> sizes[] = {{"tp", tp}, {"cp", cp}, {"etp", etp}, {"ep", ep}, {"pp", pp}};
  for (const auto& [name, v] : sizes)
    if (v < 1) throw std::invalid_argument(std::string(name) + ": must be >= 1, got " + std::to_string(v));
  if (world < 1) throw std::invalid_argument("ranks: must be >= 1");
  const int attn = tp * cp * pp, moe = etp * ep * pp;
  if (world % attn != 0)
    throw std::invalid_argument("tp: tp x cp x pp = " + std::to_string(attn) + " does not divide the " +
                                std::to_string(world) + " ranks (dp = ranks / (tp x cp x pp))");
  if (world % moe != 0)
    throw std::invalid_argument("ep: etp x ep x pp = " + std::to_string(moe) + " does not divide the " +
                                std::to_string(world) + " ranks (edp = ranks / (etp x ep x pp))");
  Mapping m;
  m.world = world, m.tp = tp, m.cp = cp, m.pp = pp, m.dp = world / attn;
  m.etp = etp, m.ep = ep, m.edp = world / moe;
  const RankGenerator attention(tp, cp, 1, m.dp, pp, order);
  const RankGenerator experts(etp, 1, ep, m.edp, pp, order);
  m.order = attention.order();
  if (!m.order.ends_with("pp") && pp > 1 && m.dp != m.edp)
    throw std::invalid_argument("order: with pp > 1 and an order that does not end with pp, dp (" +
                                std::to_string(m.dp) + ") must equal edp (" + std::to_string(m.edp) + ")");
  if (attention.groups("pp") != experts.groups("pp"))
    throw std::invalid_argument("order: the attention and expert parts put the pipeline stages on different ranks");
  return m;
}

void check_model(const Mapping& m, int64_t experts, int64_t ffn, int64_t heads, int64_t seq) {
  if (experts % m.ep != 0)
    throw std::invalid_argument("ep: the " + std::to_string(experts) + " experts do not divide by ep = " +
                                std::to_string(m.ep));
  if (ffn % m.etp != 0)
    throw std::invalid_argument("etp: ffn " + std::to_string(ffn) + " does not divide by etp = " + std::to_string(m.etp) +
                                " (fc1 is split by columns, fc2 by rows)");
  if (heads % m.tp != 0)
    throw std::invalid_argument("tp: the " + std::to_string(heads) + " heads do not divide by tp = " +
                                std::to_string(m.tp));
  if (seq % (static_cast<int64_t>(m.cp) * m.tp) != 0)
    throw std::invalid_argument("seq: " + std::to_string(seq) + " does not divide by cp x tp = " +
                                std::to_string(m.cp * m.tp) + " (each rank holds seq / cp / tp tokens of a sequence)");
}

const std::vector<int>& Groups::containing(Group g, int rank) const {
  for (const auto& group : of[static_cast<size_t>(g)])
    if (std::find(group.begin(), group.end(), rank) != group.end()) return group;
  throw std::out_of_range("rank groups: no " + std::string(to_string(g)) + " group holds rank " + std::to_string(rank));
}

int Groups::index_of(Group g, int rank) const {
  const auto& group = containing(g, rank);
  return static_cast<int>(std::find(group.begin(), group.end(), rank) - group.begin());
}

std::string Groups::describe() const {
  std::string s;
  for (int k = 0; k < kGroupKinds; ++k) {
    s += std::string(to_string(static_cast<Group>(k))) + ":";
    for (const auto& g : of[static_cast<size_t>(k)]) s += " " + join_group(g);
    s += "\n";
  }
  return s;
}

Groups make_groups(const Mapping& m) {
  const RankGenerator attention(m.tp, m.cp, 1, m.dp, m.pp, m.order);
  const RankGenerator experts(m.etp, 1, m.ep, m.edp, m.pp, m.order);
  Groups g;
  g.of[static_cast<size_t>(Group::Tp)] = attention.groups("tp");
  g.of[static_cast<size_t>(Group::Cp)] = attention.groups("cp");
  g.of[static_cast<size_t>(Group::Dp)] = attention.groups("dp");
  g.of[static_cast<size_t>(Group::DpCp)] = attention.groups("dp-cp");
  g.of[static_cast<size_t>(Group::Etp)] = experts.groups("tp");
  g.of[static_cast<size_t>(Group::Ep)] = experts.groups("ep");
  g.of[static_cast<size_t>(Group::TpEp)] = experts.groups("tp-ep");
  g.of[static_cast<size_t>(Group::Edp)] = experts.groups("dp");
  g.of[static_cast<size_t>(Group::Pp)] = attention.groups("pp");
  return g;
}

std::vector<Mapping> legal_mappings(int world, int64_t experts, int64_t ffn, int64_t heads, int64_t seq,
                                    bool allow_cp) {
  std::vector<Mapping> out;
  for (int tp : divisors(world))
    for (int cp : divisors(world / tp)) {
      if (cp > 1 && !allow_cp) continue;
      for (int etp : divisors(world))
        for (int ep : divisors(world / etp)) {
          try {
            Mapping m = make_mapping(world, tp, cp, etp, ep, 1, kDefaultOrder);
            check_model(m, experts, ffn, heads, seq);
            out.push_back(std::move(m));
          } catch (const std::invalid_argument&) {
          }
        }
    }
  return out;
}

}  // namespace mlsb::moe_train::fold
