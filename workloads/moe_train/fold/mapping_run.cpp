#include "workloads/moe_train/fold/mapping_run.hpp"

#include <algorithm>

#include "util/clock.hpp"

namespace mlsb::moe_train::fold {

MappingRun::MappingRun(comm::Communicator& world, const BlockConfig& c, const Mapping& m, const Cluster& cluster,
                       const BlockWeights& w, const BlockData& data, int threads)
    : mapping_(m), groups_(make_groups(m)) {
  validate(c, m);
  comms_ = make_rank_comms(world, groups_, cluster);
  block_ = std::make_unique<FoldedBlock>(c, mapping_, groups_, *comms_, world.rank(), threads);
  block_->load(w);
  const int64_t h = c.moe.hidden;
  const auto& own = block_->own_tokens();
  x_.resize(own.size() * h), dy_.resize(x_.size()), y_.resize(x_.size()), dx_.resize(x_.size());
  for (size_t t = 0; t < own.size(); ++t) {
    std::copy_n(data.x.begin() + own[t] * h, h, x_.begin() + t * h);
    std::copy_n(data.dy.begin() + own[t] * h, h, dy_.begin() + t * h);
  }
}

double MappingRun::step() {
  block_->zero_grad();
  block_->times().clear();
  comms_->clear_traffic();
  const auto t0 = Clock::now();
  block_->forward(x_.data(), y_.data());
  block_->backward(dy_.data(), dx_.data());
  return seconds_since(t0);
}

}  // namespace mlsb::moe_train::fold
