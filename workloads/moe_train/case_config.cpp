#include "workloads/moe_train/case_config.hpp"

#include <random>
#include <stdexcept>

#include "backends/comm/communicator.hpp"

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

comm::Communicator& cpu_comm(State& state) {
  comm::Communicator& comm = state.comm();
  if (comm.device_buffers())
    state.skip("comm " + comm.name() +
               ": the cpu layer exchanges rows in host memory (--comm mpi); NCCL between device buffers runs "
               "with --backend cuda");
  return comm;
}

precision::PrecisionConfig precision_config(const State& state) {
  precision::PrecisionConfig c;
  c.recipe = precision::parse_recipe(state.get_string("precision"));
  c.accumulate = precision::parse_accumulate(state.get_string("accumulate"));
  c.amax_history = static_cast<int>(state.get_int("amax_history"));
  c.bf16_blocks = state.get_int("bf16_blocks");
  c.activation_storage = precision::parse_activation_storage(state.get_string("activation_storage"));
  for (int t = 0; t < precision::kLayerTypes; ++t) {  // the benchmark's layer types (the layer has only moe)
    const std::string axis = precision::storage_axis(static_cast<precision::LayerType>(t));
    if (state.params().contains(axis))
      c.layer_storage[t] = precision::parse_activation_storage(state.get_string(axis), axis, true);
  }
  c.seed = state.seed();
  return c;
}

AdamWConfig optimizer_config(const State& state) {
  AdamWConfig o;
  o.lr = state.get_float("lr");
  return o;
}

LayerInputs layer_inputs(uint64_t seed, int rank, int64_t tokens, int64_t hidden) {
  auto normal_values = [&](std::mt19937_64 rng) {
    std::normal_distribution<float> d;
    std::vector<float> v(tokens * hidden);
    for (auto& x : v) x = d(rng);
    return v;
  };
  const uint64_t input_seed = splitmix64(seed ^ (0x9e3779b97f4a7c15ULL * (rank + 1)));
  LayerInputs in{normal_values(std::mt19937_64(input_seed)), normal_values(std::mt19937_64(splitmix64(input_seed)))};
  for (auto& v : in.dy) v /= static_cast<float>(tokens);
  return in;
}

}  // namespace mlsb::moe_train
