// Attention-pattern analysis on synthetic heads whose answers are known
// (reference/interpretability.md §4): a previous-token head, a uniform head, JS bounds, and head
// importance on a model where one head is known to matter.
#include "tfdebug/interpret/attention.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "tfdebug/core/error.hpp"

namespace tfdebug::interpret {
namespace {

// One layer of `heads` heads over n tokens, each filled by f(head, query, key).
template <typename F>
AttentionMaps one_layer(std::int64_t heads, std::int64_t n, F f) {
  AttentionMaps m;
  m.layers = {"attn"};
  m.heads = heads;
  m.tokens = n;
  for (std::int64_t h = 0; h < heads; ++h)
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t j = 0; j < n; ++j) m.weights.push_back(f(h, i, j));
  return m;
}

TEST(HeadStats, PreviousTokenHeadIsPreviousForEveryQuery) {
  // A[i, i-1] = 1; query 0 has no previous token and attends to itself.
  const auto m =
      one_layer(1, 6, [](auto, auto i, auto j) { return (i == 0 ? j == 0 : j == i - 1) ? 1.0 : 0.0; });
  const auto s = head_stats(m).at(0);
  EXPECT_EQ(s.role, HeadRole::previous);
  EXPECT_DOUBLE_EQ(s.fraction_previous, 1.0);
  EXPECT_DOUBLE_EQ(s.weight_previous, 1.0);
  EXPECT_DOUBLE_EQ(s.entropy, 0.0);
  EXPECT_DOUBLE_EQ(s.confidence, 1.0);
  EXPECT_DOUBLE_EQ(s.mean_distance, 5.0 / 6.0);  // 1 for queries 1..5, 0 for query 0
  EXPECT_DOUBLE_EQ(s.fraction_self, 1.0 / 6.0);
  EXPECT_EQ(role_name(s.role), "previous");
}

TEST(HeadStats, UniformHeadOverTenTokensHasEntropyLn10AndIsBroad) {
  const auto m = one_layer(1, 10, [](auto, auto, auto) { return 0.1; });
  const auto s = head_stats(m).at(0);
  EXPECT_NEAR(s.entropy, 2.302585, 1e-6);
  EXPECT_NEAR(s.entropy_relative, 1.0, 1e-12);
  EXPECT_NEAR(s.confidence, 0.1, 1e-15);
  EXPECT_DOUBLE_EQ(s.fraction_broad, 1.0);
  EXPECT_EQ(s.role, HeadRole::broad);
  EXPECT_NEAR(s.mean_distance, 3.3, 1e-12);  // sum_{i,j} |i-j| / 100 = 330 / 100
}

TEST(HeadStats, SelfNextFirstAndDelimiterHeads) {
  const std::vector<std::int64_t> tokens = {5, 3, 0, 7, 2};  // a delimiter 0 at position 2
  const auto m = one_layer(4, 5, [](auto h, auto i, auto j) {
    switch (h) {
      case 0:
        return i == j ? 1.0 : 0.0;
      case 1:
        return (i == 4 ? j == 4 : j == i + 1) ? 1.0 : 0.0;
      case 2:
        return j == 0 ? 1.0 : 0.0;
      default:
        return j == 2 ? 0.8 : 0.05;
    }
  });
  const auto s = head_stats(m, tokens, {.delimiter = 0});
  EXPECT_EQ(s[0].role, HeadRole::self);
  EXPECT_DOUBLE_EQ(s[0].fraction_self, 1.0);
  EXPECT_EQ(s[1].role, HeadRole::next);
  EXPECT_DOUBLE_EQ(s[1].fraction_next, 1.0);
  EXPECT_EQ(s[2].role, HeadRole::first);
  EXPECT_DOUBLE_EQ(s[2].fraction_first, 1.0);
  EXPECT_EQ(s[3].role, HeadRole::delimiter);
  EXPECT_DOUBLE_EQ(s[3].fraction_delimiter, 1.0);
  EXPECT_NEAR(s[3].weight_delimiter, 0.8, 1e-12);
  // Without a delimiter id the same head is mixed: its argmax, always position 2, is no query's
  // self, previous or next token for half of them.
  EXPECT_EQ(head_stats(m)[3].role, HeadRole::mixed);
}

TEST(HeadStats, RejectsRowsThatDoNotSumToOne) {
  const auto m = one_layer(1, 3, [](auto, auto, auto) { return 0.5; });
  EXPECT_THROW(head_stats(m), Error);
}

TEST(JsDivergence, ZeroForEqualHeadsAtMostLn2) {
  const std::vector<double> p = {0.7, 0.2, 0.1}, q = {0.0, 0.0, 1.0}, a = {1.0, 0.0, 0.0};
  EXPECT_DOUBLE_EQ(js_divergence(p, p), 0.0);
  EXPECT_NEAR(js_divergence(a, q), std::log(2.0), 1e-15);  // disjoint supports: the bound
  EXPECT_LE(js_divergence(p, q), std::log(2.0));
  EXPECT_DOUBLE_EQ(js_divergence(p, q), js_divergence(q, p));
  // JS(p, q) by hand with m = (0.35, 0.1, 0.55).
  const double expected = 0.5 * (0.7 * std::log(2.0) + 0.2 * std::log(2.0) + 0.1 * std::log(0.1 / 0.55)) +
                          0.5 * (1.0 * std::log(1.0 / 0.55));
  EXPECT_NEAR(js_divergence(p, q), expected, 1e-15);

  const auto m = one_layer(2, 4, [](auto h, auto i, auto j) { return h == 0 ? (i == j ? 1.0 : 0.0) : 0.25; });
  const auto d = head_divergences(m);
  ASSERT_EQ(d.size(), 4u);
  EXPECT_DOUBLE_EQ(d[0], 0.0);
  EXPECT_DOUBLE_EQ(d[3], 0.0);
  // One-hot vs uniform over 4: 0.5 ln(1/0.625) + 0.5 (0.25 ln(0.4) + 3 * 0.25 ln 2).
  const double one_hot_uniform =
      0.5 * std::log(1 / 0.625) + 0.5 * (0.25 * std::log(0.4) + 0.75 * std::log(2.0));
  EXPECT_NEAR(d[1], one_hot_uniform, 1e-15);
  EXPECT_EQ(d[1], d[2]);
}

// Two layers of two heads over 3 tokens; output 0 = 3 * (scale of layer 1 head 0) + 0.5 * (scale of
// layer 0 head 1), output 1 = 1: layer 1 head 0 matters most, layer 0 head 0 not at all.
class TwoHeadModel : public AttentionModel {
 public:
  std::vector<std::int64_t> input_shape() const override { return {3}; }
  std::int64_t output_size() const override { return 2; }
  void forward(const TensorView&, std::span<float> outputs) override {
    const std::vector<float> ones(4, 1.0f);
    forward_with_heads({}, ones, outputs);
  }
  AttentionMaps attention(std::span<const float>) override {
    AttentionMaps m;
    m.layers = {"layer0", "layer1"};
    m.heads = 2;
    m.tokens = 3;
    m.weights.assign(2 * 2 * 3 * 3, 1.0 / 3.0);
    return m;
  }
  void forward_with_heads(std::span<const float>, std::span<const float> scale,
                          std::span<float> outputs) override {
    ++calls;
    outputs[0] = 3.0f * scale[2] + 0.5f * scale[1];
    outputs[1] = 1.0f;
  }
  int calls = 0;
};

TEST(HeadImportance, TheHeadThatCarriesTheOutputMatters) {
  TwoHeadModel model;
  const std::vector<float> x = {1, 2, 3};
  const HeadImportance r = head_importance(model, x, 0);
  EXPECT_EQ(r.layers, 2);
  EXPECT_EQ(r.heads, 2);
  EXPECT_DOUBLE_EQ(r.output, 3.5);
  EXPECT_EQ(r.importance, (std::vector<double>{0.0, 0.5, 3.0, 0.0}));
  EXPECT_EQ(model.calls, 5);  // one unmasked, one per head
  EXPECT_EQ(head_importance(model, x, 1).importance, (std::vector<double>(4, 0.0)));
  EXPECT_THROW(head_importance(model, x, 2), Error);
}

}  // namespace
}  // namespace tfdebug::interpret
