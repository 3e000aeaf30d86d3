#include "workloads/moe_train/precision/recipe.hpp"

#include <cmath>
#include <stdexcept>

#include "workloads/moe_train/precision/names.hpp"

namespace mlsb::moe_train::precision {
namespace {

using formats::Element;

// Names in the order of the enums.
const std::vector<std::string> kRecipeNames = {"fp32",          "bf16",  "fp8-delayed", "fp8-current",
                                               "fp8-blockwise", "mxfp8", "nvfp4"};
const std::vector<std::string> kAccumulateNames = {"fp32", "limited", "promoted"};

}  // namespace

OperandFormat operand_format(Recipe recipe, Role role, Pass pass) {
  const bool grad = role == Role::Grad;
  OperandFormat f;
  switch (recipe) {
    case Recipe::Fp32: break;
    case Recipe::Bf16: f.scaling = Scaling::Bf16; break;
    case Recipe::Fp8Delayed:
    case Recipe::Fp8Current:  // HYBRID: E4M3 forward tensors, E5M2 gradients
      f.scaling = recipe == Recipe::Fp8Delayed ? Scaling::TensorDelayed : Scaling::TensorCurrent;
      f.element = grad ? Element::E5M2 : Element::E4M3;
      break;
    case Recipe::Fp8Blockwise:
      f.scaling = Scaling::Block, f.block = 128, f.square = role == Role::Weight;
      break;
    case Recipe::Mxfp8: f.scaling = Scaling::Mx, f.block = 32; break;
    case Recipe::Nvfp4:
      f.scaling = Scaling::Nvfp4, f.element = Element::E2M1, f.block = 16, f.square = role == Role::Weight;
      f.stochastic = grad;
      f.hadamard = pass == Pass::Wgrad;
      break;
  }
  return f;
}

const std::vector<std::string>& recipe_names() { return kRecipeNames; }
const std::vector<std::string>& accumulate_names() { return kAccumulateNames; }
Recipe parse_recipe(std::string_view name) {
  return static_cast<Recipe>(index_in(kRecipeNames, name, "precision"));
}
Accumulate parse_accumulate(std::string_view name) {
  return static_cast<Accumulate>(index_in(kAccumulateNames, name, "accumulate"));
}
std::string_view name_of(Recipe recipe) { return kRecipeNames[static_cast<size_t>(recipe)]; }

bool narrow(Recipe recipe) { return recipe != Recipe::Fp32 && recipe != Recipe::Bf16; }

int64_t blocks_kept_in_bf16(Recipe recipe, int64_t layers) {
  if (recipe != Recipe::Nvfp4) return 0;
  return static_cast<int64_t>(std::floor(0.15 * static_cast<double>(layers)));
}

}  // namespace mlsb::moe_train::precision
