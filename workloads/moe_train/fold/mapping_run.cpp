#include "workloads/moe_train/fold/mapping_run.hpp"

#include <algorithm>

#include "util/clock.hpp"

namespace mlsb::moe_train::fold {

MappingRun::MappingRun(comm::Communicator& world, const BlockConfig& c, const Mapping& m, const Cluster& cluster,
                       const BlockWeights& w, const BlockData& data, int threads, bool gpu)
    : mapping_(m), groups_(make_groups(m)) {
  validate(c, m);
  comms_ = make_rank_comms(world, groups_, cluster);
  if (gpu) {
    gpu_ = make_gpu_block(c, mapping_, groups_, *comms_, world.rank(), w);
  } else {
    block_ = std::make_unique<FoldedBlock>(c, mapping_, groups_, *comms_, world.rank(), threads);
    block_->load(w);
  }
  const int64_t h = c.moe.hidden;
  const auto& own = shard().own_tokens();
  x_.resize(own.size() * h), dy_.resize(x_.size());
  if (block_) y_.resize(x_.size()), dx_.resize(x_.size());  // a GPU block keeps its own
  for (size_t t = 0; t < own.size(); ++t) {
    std::copy_n(data.x.begin() + own[t] * h, h, x_.begin() + t * h);
    std::copy_n(data.dy.begin() + own[t] * h, h, dy_.begin() + t * h);
  }
  if (gpu_) gpu_->set_input(x_, dy_);
}

const BlockShard& MappingRun::shard() const { return gpu_ ? gpu_->shard() : *block_; }
const DispatchPlan& MappingRun::plan() const { return gpu_ ? gpu_->plan() : block_->plan(); }
BlockTimes& MappingRun::times() { return gpu_ ? gpu_->times() : block_->times(); }
BlockWeights MappingRun::grads() { return gpu_ ? gpu_->grads() : block_->grads(); }
std::vector<float> MappingRun::y() { return gpu_ ? gpu_->y() : y_; }
std::vector<float> MappingRun::dx() { return gpu_ ? gpu_->dx() : dx_; }

double MappingRun::step() {
  times().clear();
  comms_->clear_traffic();
  const auto t0 = Clock::now();
  if (gpu_) {
    gpu_->step();
  } else {
    block_->zero_grad();
    block_->forward(x_.data(), y_.data());
    block_->backward(dy_.data(), dx_.data());
  }
  return seconds_since(t0);
}

}  // namespace mlsb::moe_train::fold
