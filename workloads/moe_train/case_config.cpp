#include <stdexcept>

#include "workloads/moe_train/case_config.hpp"

namespace mlsb::moe_train {

MoeConfig layer_config(const State& state, int ranks) {
  MoeConfig c;
  try {
    const std::string name = state.get_string("preset");
    if (name == "custom") {
      c.hidden = state.get_int("hidden"), c.ffn = state.get_int("ffn");
      c.experts = state.get_int("experts"), c.topk = state.get_int("topk");
      c.shared_experts = state.get_int("shared_experts"), c.shared_ffn = state.get_int("shared_ffn");
      c.router = parse_router(state.get_string("router"));
      c.groups = state.get_int("groups"), c.group_topk = state.get_int("group_topk");
    } else {
      c = preset(name, state.get_int("scale"));
    }
    c.capacity_factor = state.get_float("capacity_factor");
    c.drop = parse_drop_policy(state.get_string("drop_policy"));
    c.aux_coef = state.get_float("aux_coef"), c.z_coef = state.get_float("z_coef");
    c.bias_rate = state.get_float("bias_rate");
    validate(c, ranks);
  } catch (const std::invalid_argument& e) {
    state.skip(e.what());
  }
  return c;
}

AdamWConfig optimizer_config(const State& state) {
  AdamWConfig o;
  o.lr = state.get_float("lr");
  return o;
}

}  // namespace mlsb::moe_train
