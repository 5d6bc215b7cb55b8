// LIME for text on a model that sums a weight per token, where the answer is known; the surrogate
// against python3-sklearn's Ridge on the same samples and weights; seeding.
#include "tfdebug/interpret/lime_text.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <numeric>

#include "lime_check.hpp"
#include "test_models.hpp"
#include "tfdebug/core/error.hpp"

namespace tfdebug::interpret {
namespace {

// output = the sum of each token's weight (token 0, the mask, weighs nothing).
testing::FunctionModel token_sum(std::int64_t length, std::map<int, double> weight) {
  return testing::FunctionModel(
      length, 1,
      [weight](const std::vector<double>& ids) {
        double s = 0;
        for (const double id : ids) s += weight.at(static_cast<int>(id));
        return std::vector<double>{s};
      },
      [length](const std::vector<double>&, std::int64_t) {
        return std::vector<double>(static_cast<std::size_t>(length), 0.0);
      });
}

const std::map<int, double> kWeights = {{0, 0}, {1, 0.5}, {2, -1}, {3, 2}, {5, -3}, {7, 1}};
const std::vector<float> kTokens = {3, 5, 1, 7, 2};

std::vector<std::size_t> ranking(const std::vector<double>& v) {
  std::vector<std::size_t> order(v.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return v[a] > v[b]; });
  return order;
}

TEST(LimeText, ALinearTextModelRecoversTheRankingOfItsWeights) {
  testing::FunctionModel m = token_sum(5, kWeights);
  for (const TokenMasking masking : {TokenMasking::replace, TokenMasking::remove}) {
    LimeTextOptions o;
    o.masking = masking;
    o.seed = 1;
    const LimeAttribution a = lime_text(m, kTokens, 0, o);
    std::vector<double> truth;
    for (const float t : kTokens) truth.push_back(kWeights.at(static_cast<int>(t)));
    EXPECT_EQ(ranking(a.values), ranking(truth));  // 3 (2), 7 (1), 1 (0.5), 2 (-1), 5 (-3)
    for (std::size_t j = 0; j < truth.size(); ++j) EXPECT_NEAR(a.values[j], truth[j], 0.02) << j;
    EXPECT_GT(a.r2, 0.9999);
    EXPECT_NEAR(a.local_prediction, -0.5, 0.01);  // 2 - 3 + 0.5 + 1 - 1
    EXPECT_DOUBLE_EQ(a.output, -0.5);
    EXPECT_EQ(a.evaluations, 5000);
    EXPECT_EQ(a.shape, (std::vector<std::int64_t>{5}));
  }
}

TEST(LimeText, TheSurrogateIsSklearnsRidgeOnTheSameSamples) {
  // A model that is not linear in the tokens, so the fit is not exact: output = (sum)^2 / 4.
  testing::FunctionModel m(
      5, 1,
      [](const std::vector<double>& ids) {
        double s = 0;
        for (const double id : ids) s += kWeights.at(static_cast<int>(id));
        return std::vector<double>{s * s / 4};
      },
      [](const std::vector<double>&, std::int64_t) { return std::vector<double>(5, 0.0); });
  LimeTextOptions o;
  o.samples = 600;
  o.seed = 9;
  o.keep_neighbourhood = true;
  const LimeAttribution a = lime_text(m, kTokens, 0, o);
  ASSERT_EQ(a.data.size(), 600U * 5);
  for (std::size_t j = 0; j < 5; ++j) EXPECT_EQ(a.data[j], 1);  // sample 0 is the input
  EXPECT_EQ(a.weights[0], 1);
  EXPECT_GE(a.r2, 0);
  EXPECT_LE(a.r2, 1);
  EXPECT_TRUE(testing::sklearn_agrees(a, a.values, "lime_text"));
}

TEST(LimeText, TheSameSeedGivesTheSameExplanationWhateverTheBatch) {
  testing::FunctionModel m = token_sum(5, kWeights);
  LimeTextOptions o;
  o.samples = 700;
  o.seed = 4;
  const LimeAttribution a = lime_text(m, kTokens, 0, o);
  o.max_batch = 13;
  const LimeAttribution b = lime_text(m, kTokens, 0, o);
  EXPECT_EQ(a.values, b.values);
  EXPECT_EQ(a.intercept, b.intercept);
  EXPECT_EQ(a.r2, b.r2);
  EXPECT_LE(m.largest_batch, 256);
  o.seed = 5;
  EXPECT_NE(lime_text(m, kTokens, 0, o).values, a.values);
  o.samples = 1;
  EXPECT_THROW(lime_text(m, kTokens, 0, o), Error);
}

// Token 3 twice: with bow it is one feature, hidden at both places at once.
const std::vector<float> kRepeated = {3, 5, 3, 7, 2};

TEST(LimeText, BowGivesAWordThatAppearsTwiceOneWeight) {
  // Every input the model sees: position 0 and 2 (both token 3) are hidden together.
  std::vector<std::vector<double>> seen;
  testing::FunctionModel m(
      5, 1,
      [&](const std::vector<double>& ids) {
        seen.push_back(ids);
        double s = 0;
        for (const double id : ids) s += kWeights.at(static_cast<int>(id));
        return std::vector<double>{s};
      },
      [](const std::vector<double>&, std::int64_t) { return std::vector<double>(5, 0.0); });
  for (const TokenMasking masking : {TokenMasking::replace, TokenMasking::remove}) {
    seen.clear();
    LimeTextOptions o;
    o.bow = true;
    o.masking = masking;
    o.seed = 3;
    const LimeTextAttribution a = lime_text(m, kRepeated, 0, o);
    ASSERT_EQ(a.words, (std::vector<float>{3, 5, 7, 2}));
    ASSERT_EQ(a.word_weights.size(), 4U);
    // Hiding token 3 removes 2 x 2: one weight of 4, given to both of its positions.
    const double truth[] = {4, -3, 1, -1};
    for (std::size_t w = 0; w < 4; ++w) EXPECT_NEAR(a.word_weights[w], truth[w], 0.02) << w;
    ASSERT_EQ(a.values.size(), 5U);
    EXPECT_EQ(a.values[0], a.word_weights[0]);
    EXPECT_EQ(a.values[2], a.word_weights[0]);
    EXPECT_EQ(a.values[1], a.word_weights[1]);
    EXPECT_EQ(a.values[3], a.word_weights[2]);
    EXPECT_EQ(a.values[4], a.word_weights[3]);
    EXPECT_GT(a.r2, 0.9999);
    ASSERT_EQ(seen.size(), 5000U);
    std::size_t threes_hidden = 0;
    for (const std::vector<double>& ids : seen) {
      const auto threes = std::count(ids.begin(), ids.end(), 3.0);
      ASSERT_TRUE(threes == 0 || threes == 2);  // never one of the two
      threes_hidden += threes == 0 ? 1 : 0;
    }
    EXPECT_GT(threes_hidden, 1000U);  // hidden in about half the samples
  }
}

TEST(LimeText, BowsSurrogateIsSklearnsRidgeOnTheSameSamples) {
  testing::FunctionModel m(
      5, 1,
      [](const std::vector<double>& ids) {
        double s = 0;
        for (const double id : ids) s += kWeights.at(static_cast<int>(id));
        return std::vector<double>{s * s / 4};
      },
      [](const std::vector<double>&, std::int64_t) { return std::vector<double>(5, 0.0); });
  LimeTextOptions o;
  o.bow = true;
  o.samples = 600;
  o.seed = 10;
  o.keep_neighbourhood = true;
  const LimeTextAttribution a = lime_text(m, kRepeated, 0, o);
  ASSERT_EQ(a.data.size(), 600U * 4);  // one column per distinct token
  for (std::size_t w = 0; w < 4; ++w) EXPECT_EQ(a.data[w], 1);
  EXPECT_TRUE(testing::sklearn_agrees(a, a.word_weights, "lime_text_bow"));
  // Without bow the same input has five features.
  o.bow = false;
  const LimeTextAttribution b = lime_text(m, kRepeated, 0, o);
  EXPECT_EQ(b.data.size(), 600U * 5);
  EXPECT_TRUE(b.words.empty());
  EXPECT_NE(b.values[0], b.values[2]);
}

}  // namespace
}  // namespace tfdebug::interpret
