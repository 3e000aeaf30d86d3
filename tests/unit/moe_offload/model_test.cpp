// Model presets and the ExpertStore: deterministic random weights with the right scale, custom
// allocators, and checkpoints (Mixtral and Qwen3 naming, sharded, BF16/F16) packed at the right offsets.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <nlohmann/json.hpp>

#include "backends/formats/small_floats.hpp"
#include "support/safetensors_writer.hpp"
#include "support/test_support.hpp"
#include "workloads/moe_offload/model.hpp"

namespace mlsb::moe_offload {
namespace {

using testing::AllOf;
using testing::HasSubstr;

using Tensor = test::SafetensorsTensor;
using test::write_safetensors;

/// The value a checkpoint holds at element i of part p (0 gate, 1 up, 2 down) of (layer, expert):
/// distinct while ffn * hidden <= 16, exact in F32 (and in BF16/F16 for the small models below).
float code(int64_t layer, int64_t expert, int p, int64_t i) {
  return static_cast<float>(((layer * 8 + expert) * 3 + p) * 16 + i);
}

/// Expert tensors of checkpoint layer `layer` (stored as `moe_layer`'s codes) in dtype `dtype`.
std::vector<Tensor> expert_tensors(const ModelShape& m, int64_t layer, int64_t moe_layer, bool mixtral,
                                   const std::string& dtype) {
  static const char* mixtral_parts[] = {"w1", "w3", "w2"};
  static const char* qwen_parts[] = {"gate_proj", "up_proj", "down_proj"};
  std::vector<Tensor> out;
  for (int64_t e = 0; e < m.experts; ++e)
    for (int p = 0; p < 3; ++p) {
      const int64_t n = m.hidden * m.ffn;
      std::string bytes;
      for (int64_t i = 0; i < n; ++i) {
        const float v = code(moe_layer, e, p, i);
        if (dtype == "F32") {
          bytes.append(reinterpret_cast<const char*>(&v), 4);
        } else {
          const uint16_t h = dtype == "BF16" ? formats::f32_to_bf16(v) : formats::f32_to_fp16(v);
          bytes.append(reinterpret_cast<const char*>(&h), 2);
        }
      }
      const std::string name = "model.layers." + std::to_string(layer) +
                               (mixtral ? ".block_sparse_moe.experts." : ".mlp.experts.") + std::to_string(e) + "." +
                               (mixtral ? mixtral_parts : qwen_parts)[p] + ".weight";
      const std::vector<int64_t> shape = p == 2 ? std::vector<int64_t>{m.hidden, m.ffn}
                                                : std::vector<int64_t>{m.ffn, m.hidden};
      out.push_back({name, dtype, shape, bytes});
    }
  return out;
}

/// Every weight of `s` equals the code of its (layer, expert, part, element).
void expect_codes(const ExpertStore& s) {
  const ModelShape& m = s.shape();
  const int64_t fh = m.ffn * m.hidden;
  for (int64_t l = 0; l < m.layers; ++l)
    for (int64_t e = 0; e < m.experts; ++e)
      for (int p = 0; p < 3; ++p)
        for (int64_t i = 0; i < fh; ++i)
          ASSERT_EQ(s.expert(l, e)[p * fh + i], code(l, e, p, i)) << "layer " << l << " expert " << e << " part " << p;
}

template <typename E>
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  return "no error";
}

// ---- presets ----

TEST(ModelPreset, PublishedShapesDividedByScale) {
  const ModelShape m = model_preset("mixtral-8x7b", 1);
  EXPECT_EQ(m.layers, 32);
  EXPECT_EQ(m.experts, 8);
  EXPECT_EQ(m.topk, 2);
  EXPECT_EQ(m.hidden, 4096);
  EXPECT_EQ(m.ffn, 14336);
  const ModelShape q = model_preset("qwen3-30b-a3b", 4);
  EXPECT_EQ(q.layers, 48);
  EXPECT_EQ(q.experts, 128);
  EXPECT_EQ(q.topk, 8);
  EXPECT_EQ(q.hidden, 512);
  EXPECT_EQ(q.ffn, 192);
  const ModelShape d = model_preset("deepseek-v3", 100000);
  EXPECT_EQ(d.layers, 58);
  EXPECT_EQ(d.experts, 256);
  EXPECT_EQ(d.topk, 8);
  EXPECT_EQ(d.hidden, 1);  // at least 1
  EXPECT_EQ(d.ffn, 1);
  EXPECT_EQ(model_preset("deepseek-v3", 8).expert_bytes(), 3 * 896 * 256 * 4);
}

TEST(ModelPreset, NamesAndErrors) {
  EXPECT_THAT(model_preset_names(), testing::ElementsAre("mixtral-8x7b", "qwen3-30b-a3b", "deepseek-v3"));
  for (const auto& n : model_preset_names()) EXPECT_NO_THROW(model_preset(n, 2));
  EXPECT_EQ(error_of<std::invalid_argument>([] { model_preset("llama", 1); }),
            "preset: unknown 'llama' (mixtral-8x7b, qwen3-30b-a3b, deepseek-v3, custom)");
  EXPECT_EQ(error_of<std::invalid_argument>([] { model_preset("custom", 1); }),
            "preset: 'custom' has no published shape");
  EXPECT_EQ(error_of<std::invalid_argument>([] { model_preset("mixtral-8x7b", 0); }), "scale: must be at least 1");
}

// ---- random weights ----

TEST(ExpertStore, TheSameSeedGivesTheSameWeights) {
  const ModelShape m{2, 3, 2, 16, 24};
  ExpertStore a(m, 7), b(m, 7), c(m, 8);
  EXPECT_EQ(a.expert_floats(), 3 * 16 * 24);
  const size_t bytes = static_cast<size_t>(m.layers * m.experts * a.expert_floats()) * 4;
  EXPECT_EQ(std::memcmp(a.expert(0, 0), b.expert(0, 0), bytes), 0);
  EXPECT_NE(std::memcmp(a.expert(0, 0), c.expert(0, 0), bytes), 0);
  // Every block has its own stream.
  EXPECT_NE(std::memcmp(a.expert(0, 0), a.expert(0, 1), a.expert_floats() * 4), 0);
  EXPECT_NE(std::memcmp(a.expert(0, 0), a.expert(1, 0), a.expert_floats() * 4), 0);
  EXPECT_EQ(a.expert(1, 2), a.expert(0, 0) + (1 * 3 + 2) * a.expert_floats());
}

TEST(ExpertStore, RandomWeightsHaveStdOneOverSqrtFanIn) {
  const ModelShape m{2, 2, 1, 64, 256};
  const ExpertStore s(m, 1);
  const int64_t w13 = 2 * m.ffn * m.hidden;
  for (int64_t l = 0; l < m.layers; ++l)
    for (int64_t e = 0; e < m.experts; ++e) {
      const auto moments = [](const float* w, int64_t n) {
        double sum = 0, sq = 0;
        for (int64_t i = 0; i < n; ++i) sum += w[i], sq += double(w[i]) * w[i];
        return std::pair{sum / n, std::sqrt(sq / n - (sum / n) * (sum / n))};
      };
      const auto [mean13, std13] = moments(s.expert(l, e), w13);
      const auto [mean2, std2] = moments(s.expert(l, e) + w13, m.hidden * m.ffn);
      EXPECT_NEAR(std13, 1 / std::sqrt(64.0), 0.02 / std::sqrt(64.0));  // 32768 samples: ~0.4% error
      EXPECT_NEAR(std2, 1 / std::sqrt(256.0), 0.02 / std::sqrt(256.0));
      EXPECT_NEAR(mean13, 0, 0.02 / std::sqrt(64.0));
      EXPECT_NEAR(mean2, 0, 0.02 / std::sqrt(256.0));
    }
}

int g_allocs = 0, g_releases = 0;
float* g_last = nullptr;
float* counting_alloc(size_t floats) {
  ++g_allocs;
  return g_last = static_cast<float*>(std::malloc(floats * sizeof(float)));
}
void counting_free(float* p) {
  ++g_releases;
  EXPECT_EQ(p, g_last);
  std::free(p);
}

TEST(ExpertStore, UsesTheGivenAllocatorAndReleasesOnce) {
  g_allocs = g_releases = 0;
  {
    const ExpertStore s(ModelShape{1, 2, 1, 4, 8}, 3, &counting_alloc, &counting_free);
    EXPECT_EQ(s.expert(0, 0), g_last);
    EXPECT_EQ(g_allocs, 1);
    EXPECT_EQ(g_releases, 0);
  }
  EXPECT_EQ(g_releases, 1);
  EXPECT_THROW(ExpertStore(ModelShape{1, 2, 1, 4, 8}, 3, &counting_alloc, nullptr), std::invalid_argument);
  EXPECT_THROW(ExpertStore(ModelShape{0, 2, 1, 4, 8}, 3), std::invalid_argument);
}

// ---- checkpoints ----

TEST(ExpertStore, MixtralCheckpointPacksGateUpThenDown) {
  test::TempDir dir;
  const ModelShape m{2, 3, 2, 3, 5};
  auto tensors = expert_tensors(m, 0, 0, true, "F32");
  const auto more = expert_tensors(m, 1, 1, true, "F32");
  tensors.insert(tensors.end(), more.begin(), more.end());
  tensors.push_back({"model.embed_tokens.weight", "F32", {2, 3}, std::string(24, '\0')});
  tensors.push_back({"model.layers.0.block_sparse_moe.gate.weight", "F32", {3, 3}, std::string(36, '\0')});
  write_safetensors(dir / "model.safetensors", tensors);
  const ExpertStore s(m, (dir / "model.safetensors").string());
  EXPECT_EQ(s.expert_floats(), 45);
  expect_codes(s);
}

TEST(ExpertStore, QwenStyleShardedHalfCheckpointNumbersMoeLayersInOrder) {
  test::TempDir dir;
  const ModelShape m{2, 2, 1, 2, 3};
  // Layer 0 is dense (its MLP is not an expert); MoE layers are checkpoint layers 1 and 3.
  std::vector<Tensor> first = {{"model.layers.0.mlp.gate_proj.weight", "F32", {3, 2}, std::string(24, '\0')},
                               {"model.layers.1.mlp.gate.weight", "F32", {2, 2}, std::string(16, '\0')}};
  const auto l1 = expert_tensors(m, 1, 0, false, "BF16");
  first.insert(first.end(), l1.begin(), l1.end());
  write_safetensors(dir / "model-00001-of-00002.safetensors", first);
  write_safetensors(dir / "model-00002-of-00002.safetensors", expert_tensors(m, 3, 1, false, "F16"));
  const ExpertStore s(m, dir.path().string());
  expect_codes(s);
}

class CheckpointErrors : public testing::Test {
 protected:
  void write(const std::vector<Tensor>& tensors) { write_safetensors(dir_ / "model.safetensors", tensors); }
  std::string invalid(const ModelShape& m) {
    return error_of<std::invalid_argument>([&] { ExpertStore s(m, (dir_ / "model.safetensors").string()); });
  }
  std::string runtime(const ModelShape& m) {
    return error_of<std::runtime_error>([&] { ExpertStore s(m, (dir_ / "model.safetensors").string()); });
  }
  test::TempDir dir_;
  const ModelShape m_{2, 4, 2, 8, 16};
};

TEST_F(CheckpointErrors, AShapeMismatchNamesTheTensorAndBothShapes) {
  auto t = expert_tensors(m_, 0, 0, true, "F32");
  const auto l1 = expert_tensors(m_, 1, 1, true, "F32");
  t.insert(t.end(), l1.begin(), l1.end());
  write(t);
  EXPECT_EQ(invalid({2, 4, 2, 16, 8}),
            "checkpoint: model.layers.0.block_sparse_moe.experts.0.w1.weight has shape [16, 8], the model expects "
            "[8, 16] (ffn, hidden)");
  for (auto& x : t)
    if (x.name == "model.layers.1.block_sparse_moe.experts.2.w2.weight") x.shape = {16, 8};
  write(t);
  EXPECT_EQ(invalid(m_),
            "checkpoint: model.layers.1.block_sparse_moe.experts.2.w2.weight has shape [16, 8], the model expects "
            "[8, 16] (hidden, ffn)");
}

TEST_F(CheckpointErrors, LayerCountMissingAndExtraExperts) {
  auto t = expert_tensors(m_, 0, 0, false, "F32");
  auto l1 = expert_tensors(m_, 5, 1, false, "F32");
  t.insert(t.end(), l1.begin(), l1.end());
  write(t);
  EXPECT_EQ(invalid({3, 4, 2, 8, 16}), "checkpoint: 2 MoE layers, the model has 3 (layers)");
  EXPECT_EQ(invalid({1, 4, 2, 8, 16}), "no error") << "a model of fewer layers serves the checkpoint's first";
  EXPECT_THAT(invalid({2, 5, 2, 8, 16}),
              AllOf(HasSubstr("checkpoint: model.layers.0.mlp.experts.4.gate_proj.weight is missing"),
                    HasSubstr("5 experts")));
  EXPECT_THAT(invalid({2, 3, 2, 8, 16}),
              AllOf(HasSubstr("checkpoint: model.layers.0.mlp.experts.3."), HasSubstr("beyond the model's 3 experts")));
  std::erase_if(t, [](const Tensor& x) { return x.name == "model.layers.5.mlp.experts.1.up_proj.weight"; });
  write(t);
  EXPECT_THAT(invalid(m_), HasSubstr("checkpoint: model.layers.5.mlp.experts.1.up_proj.weight is missing"));
}

TEST_F(CheckpointErrors, BothNamingStylesForOneExpertIsAnError) {
  auto t = expert_tensors(m_, 0, 0, false, "F32");
  auto l1 = expert_tensors(m_, 1, 1, false, "F32");
  t.insert(t.end(), l1.begin(), l1.end());
  t.push_back(expert_tensors(m_, 1, 1, true, "F32")[0]);
  write(t);
  EXPECT_THAT(invalid(m_), AllOf(HasSubstr("model.layers.1.block_sparse_moe.experts.0.w1.weight"),
                                 HasSubstr("model.layers.1.mlp.experts.0.gate_proj.weight"),
                                 HasSubstr("same weight of layer 1 expert 0")));
}

TEST_F(CheckpointErrors, UnreadableDtypeOrMalformedFileIsARuntimeErrorNamingTheFile) {
  auto t = expert_tensors(m_, 0, 0, true, "F32");
  auto l1 = expert_tensors(m_, 1, 1, true, "F32");
  t.insert(t.end(), l1.begin(), l1.end());
  t[4].dtype = "F8_E4M3";
  t[4].bytes.resize(t[4].bytes.size() / 4);
  write(t);
  const std::string file = (dir_ / "model.safetensors").string();
  EXPECT_THAT(runtime(m_), AllOf(HasSubstr("checkpoint " + file + ": "), HasSubstr(t[4].name), HasSubstr("F8_E4M3")));
  test::write_file(dir_ / "model.safetensors", "short");
  EXPECT_THAT(runtime(m_), HasSubstr("tensor file '" + file + "': "));
}

}  // namespace
}  // namespace mlsb::moe_offload
