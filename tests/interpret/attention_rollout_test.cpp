// Attention Rollout and Flow against values checked by hand (reference/interpretability.md §1,
// "Attention Rollout / Flow").
#include "tfdebug/interpret/attention_rollout.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "tfdebug/core/error.hpp"

namespace tfdebug::interpret {
namespace {

AttentionMaps uniform(std::int64_t layers, std::int64_t heads, std::int64_t n) {
  AttentionMaps m;
  for (std::int64_t l = 0; l < layers; ++l) m.layers.push_back("layer" + std::to_string(l));
  m.heads = heads;
  m.tokens = n;
  m.weights.assign(static_cast<std::size_t>(layers * heads * n * n), 1.0 / static_cast<double>(n));
  return m;
}

AttentionMaps identity(std::int64_t layers, std::int64_t heads, std::int64_t n) {
  AttentionMaps m = uniform(layers, heads, n);
  for (std::int64_t l = 0; l < layers; ++l)
    for (std::int64_t h = 0; h < heads; ++h)
      for (std::int64_t i = 0; i < n; ++i)
        for (std::int64_t j = 0; j < n; ++j) m.weights[m.index(l, h, i, j)] = i == j ? 1.0 : 0.0;
  return m;
}

TEST(AttentionRollout, UniformAttentionOverFourTokensForThreeLayers) {
  // R_L = U + 0.5^L (I - U): 0.25 + 0.125 * 0.75 on the diagonal, 0.25 - 0.125 * 0.25 elsewhere.
  const auto r = attention_rollout(uniform(3, 2, 4));
  ASSERT_EQ(r.size(), 16u);
  for (std::size_t i = 0; i < 4; ++i)
    for (std::size_t j = 0; j < 4; ++j)
      EXPECT_NEAR(r[i * 4 + j], i == j ? 0.34375 : 0.21875, 1e-15) << i << "," << j;
}

TEST(AttentionRollout, IdentityAttentionGivesIdentity) {
  for (const HeadFusion f : {HeadFusion::mean, HeadFusion::max, HeadFusion::min}) {
    const auto r = attention_rollout(identity(4, 3, 5), {.fusion = f});
    for (std::size_t i = 0; i < 5; ++i)
      for (std::size_t j = 0; j < 5; ++j) EXPECT_EQ(r[i * 5 + j], i == j ? 1.0 : 0.0);
  }
}

TEST(AttentionRollout, RowsSumToOneForAnyFusionAndDiscardRatio) {
  // Two layers, two heads over 4 tokens: a causal previous-token head and a causal uniform one.
  AttentionMaps m = uniform(2, 2, 4);
  for (std::int64_t l = 0; l < 2; ++l)
    for (std::int64_t i = 0; i < 4; ++i)
      for (std::int64_t j = 0; j < 4; ++j) {
        m.weights[m.index(l, 0, i, j)] = j == std::max<std::int64_t>(i - 1, 0) ? 1.0 : 0.0;
        m.weights[m.index(l, 1, i, j)] = j <= i ? 1.0 / static_cast<double>(i + 1) : 0.0;
      }
  for (const HeadFusion f : {HeadFusion::mean, HeadFusion::max, HeadFusion::min}) {
    for (const double discard : {0.0, 0.5, 0.9}) {
      const auto r = attention_rollout(m, {.fusion = f, .discard_ratio = discard});
      for (std::size_t i = 0; i < 4; ++i) {
        EXPECT_NEAR(std::accumulate(r.begin() + static_cast<long>(i * 4),
                                    r.begin() + static_cast<long>(i * 4 + 4), 0.0),
                    1.0, 1e-12);
        for (std::size_t j = i + 1; j < 4; ++j) EXPECT_EQ(r[i * 4 + j], 0.0);  // still causal
      }
    }
  }
  // One layer by hand, mean fusion: query 1 gives 0.5 to token 0 (head 0) + 0.25 (head 1 halves),
  // 0.25 to itself; plus I: (0.75, 1.25) / 2.
  m.layers.resize(1);
  m.weights.resize(2 * 16);
  const auto r = attention_rollout(m);
  EXPECT_DOUBLE_EQ(r[4 + 0], 0.375);
  EXPECT_DOUBLE_EQ(r[4 + 1], 0.625);
  // The row normalisation is per row, not vit-explain's per column (vit-explain#16): query 3 of the
  // one-layer max fusion: head 0 has 1 on token 2, head 1 0.25 on each; max = (.25, .25, 1, .25) + I.
  const auto rmax = attention_rollout(m, {.fusion = HeadFusion::max});
  EXPECT_DOUBLE_EQ(rmax[12 + 2], 1.0 / 2.75);
  EXPECT_DOUBLE_EQ(rmax[12 + 3], 1.25 / 2.75);
}

TEST(AttentionRollout, RejectsABadDiscardRatio) {
  EXPECT_THROW(attention_rollout(uniform(1, 1, 2), {.discard_ratio = 1.0}), Error);
  EXPECT_THROW(attention_rollout(uniform(1, 1, 2), {.discard_ratio = -0.1}), Error);
}

TEST(MaxFlow, TheTextbookNetwork) {
  // CLRS Figure 26.1: s=0, v1..v4 = 1..4, t=5; maximum flow 23.
  std::vector<double> c(36, 0.0);
  const auto edge = [&](int u, int v, double cap) { c[static_cast<std::size_t>(u * 6 + v)] = cap; };
  edge(0, 1, 16), edge(0, 2, 13), edge(1, 3, 12), edge(2, 1, 4), edge(2, 4, 14), edge(3, 2, 9),
      edge(3, 5, 20), edge(4, 3, 7), edge(4, 5, 4);
  EXPECT_DOUBLE_EQ(max_flow(c, 6, 0, 5), 23.0);
  EXPECT_DOUBLE_EQ(max_flow(c, 6, 5, 0), 0.0);
  EXPECT_DOUBLE_EQ(max_flow(c, 6, 2, 2), 0.0);
}

TEST(AttentionFlow, TwoLayersOverTwoTokensByHand) {
  // Layer 1 head attends (0.5, 0.5) from both queries; layer 2 is the identity. Â_1 = ((0.75, 0.25),
  // (0.25, 0.75)); Â_2 = I. From last-layer token 0 the only edge out is (2,0) -> (1,0) of capacity
  // 1, then 0.75 to token 0 and 0.25 to token 1.
  AttentionMaps m = uniform(2, 1, 2);
  m.weights = {0.5, 0.5, 0.5, 0.5, 1, 0, 0, 1};
  const auto f = attention_flow(m);
  EXPECT_NEAR(f[0], 0.75, 1e-15);
  EXPECT_NEAR(f[1], 0.25, 1e-15);
  EXPECT_NEAR(f[2], 0.25, 1e-15);
  EXPECT_NEAR(f[3], 0.75, 1e-15);
  // Two uniform layers: Â = ((.75, .25), (.25, .75)) twice. To token 0 from (2,0): through (1,0)
  // min(.75, .75) and through (1,1) min(.25, .25): 1.0; to token 1: min(.75, .25) + min(.25, .75) = 0.5.
  // Rollout says 0.625 and 0.375: flow is not a distribution.
  const auto g = attention_flow(uniform(2, 1, 2));
  EXPECT_NEAR(g[0], 1.0, 1e-15);
  EXPECT_NEAR(g[1], 0.5, 1e-15);
  const auto r = attention_rollout(uniform(2, 1, 2));
  EXPECT_NEAR(r[0], 0.625, 1e-15);
  EXPECT_NEAR(r[1], 0.375, 1e-15);
}

// A model whose attention is given: the rollout attribution is the last token's row.
class FixedAttention : public AttentionModel {
 public:
  std::vector<std::int64_t> input_shape() const override { return {4}; }
  std::int64_t output_size() const override { return 2; }
  void forward(const TensorView&, std::span<float> outputs) override {
    outputs[0] = 0.5f;
    outputs[1] = 2.0f;
  }
  AttentionMaps attention(std::span<const float>) override { return uniform(3, 2, 4); }
  void forward_with_heads(std::span<const float>, std::span<const float>, std::span<float> outputs) override {
    outputs[0] = 0.5f;
    outputs[1] = 2.0f;
  }
};

TEST(RolloutAttribution, IsTheQueryRowWithTheTopOutput) {
  FixedAttention model;
  const std::vector<float> x = {3, 5, 1, 0};
  const Attribution a = rollout_attribution(model, x);
  EXPECT_EQ(a.method, "attention-rollout");
  EXPECT_EQ(a.shape, (std::vector<std::int64_t>{4}));
  ASSERT_EQ(a.values.size(), 4u);
  for (std::size_t j = 0; j < 4; ++j) EXPECT_NEAR(a.values[j], j == 3 ? 0.34375 : 0.21875, 1e-15);
  EXPECT_NEAR(a.sum(), 1.0, 1e-15);
  EXPECT_EQ(a.output, 2.0);
  EXPECT_TRUE(std::isnan(a.delta));
  const Attribution b = rollout_attribution(model, x, {.query = 0, .target = 0});
  for (std::size_t j = 0; j < 4; ++j) EXPECT_NEAR(b.values[j], j == 0 ? 0.34375 : 0.21875, 1e-15);
  EXPECT_EQ(b.output, 0.5);
  EXPECT_THROW(rollout_attribution(model, x, {.query = 4}), Error);
  EXPECT_THROW(rollout_attribution(model, std::vector<float>{1, 2}), Error);
}

}  // namespace
}  // namespace tfdebug::interpret
