// DiCE-style diverse counterfactuals on logistic models, where the answer is known (reference
// section 3): the diversity kernel's determinant, k = 1 against Wachter, immutable features,
// validity and diversity of a set, MAD = 0, seeding.
#include "tfdebug/interpret/diverse_counterfactuals.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "test_models.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/interpret/counterfactual.hpp"

namespace tfdebug::interpret {
namespace {

// The logit of the logistic model of counterfactual_test.cpp: z = w . x + b, w = (1, -2, 0.5),
// b = -1, so z(0) = -1 (class 0).
testing::FunctionModel logit() {
  return testing::linear({1, -2, 0.5}, -1);
}

// Three classes, z_c = w_c . x: class 2 wins where x0 + x1 is large.
testing::FunctionModel three_classes() {
  const std::vector<std::vector<double>> w = {{1, 0}, {0, 1}, {1, 1}};
  const std::vector<double> b = {0, 0, -3};
  return testing::FunctionModel(
      2, 3,
      [w, b](const std::vector<double>& x) {
        std::vector<double> z(3);
        for (std::size_t c = 0; c < 3; ++c) z[c] = w[c][0] * x[0] + w[c][1] * x[1] + b[c];
        return z;
      },
      [w](const std::vector<double>&, std::int64_t t) { return w[static_cast<std::size_t>(t)]; });
}

std::vector<float> rows_with_mad(const std::vector<float>& mad) {
  std::vector<float> rows;
  for (const float sign : {-1.0f, 0.0f, 1.0f})
    for (const float m : mad) rows.push_back(sign * m);
  return rows;
}

bool in_class_1(const DiverseCounterfactual& c) {
  double z = -1;
  const double w[] = {1, -2, 0.5};
  for (std::size_t j = 0; j < 3; ++j) z += w[j] * c.x[j];
  return z > 0;
}

TEST(DiverseCounterfactuals, TheKernelDeterminantIsInZeroOneAndZeroForIdenticalPoints) {
  const std::vector<double> scale = {1, 1};
  const std::vector<float> apart = {0, 0, 1, 0, 0, 2};
  const double det = diversity_determinant(apart, 3, scale);
  EXPECT_GT(det, 0);
  EXPECT_LE(det, 1);
  // K = [[1, 1/2, 1/3], [1/2, 1, 1/4], [1/3, 1/4, 1]] (distances 1, 2, 3 ... by hand: d01 = 1,
  // d02 = 2, d12 = 3).
  const double a = 0.5, b = 1.0 / 3, c = 0.25;
  EXPECT_NEAR(det, 1 - c * c - a * (a - c * b) + b * (a * c - b), 1e-12);
  const std::vector<float> same = {1, 2, 1, 2, 1, 2};
  EXPECT_EQ(diversity_determinant(same, 3, scale), 0);
  EXPECT_LT(diversity_determinant(same, 3, scale, 1e-4), 1e-7);  // DiCE's 1e-4: (1e-4)^2 (3 + 1e-4)
  EXPECT_EQ(diversity_determinant(std::span<const float>(same).first(2), 1, scale), 1);
  const std::vector<float> far = {0, 0, 1000, 0};  // far apart: K -> I
  EXPECT_NEAR(diversity_determinant(far, 2, scale), 1, 1e-5);
}

TEST(DiverseCounterfactuals, OneCounterfactualBehavesLikeWachter) {
  testing::FunctionModel m = logit();
  const std::vector<float> x = {0, 0, 0};
  DiverseCounterfactualOptions o;
  o.count = 1;
  o.training = rows_with_mad({1, 1, 1});  // |w| * MAD = (1, 2, 0.5): feature 1 is the most effective
  const DiverseCounterfactuals set = diverse_counterfactuals(m, x, o);
  ASSERT_EQ(set.counterfactuals.size(), 1U);
  const DiverseCounterfactual& c = set.counterfactuals[0];
  EXPECT_TRUE(c.valid);
  EXPECT_TRUE(in_class_1(c));
  EXPECT_EQ(set.validity, 1);
  EXPECT_EQ(c.changed, 1);
  EXPECT_LT(c.x[1], 0);
  EXPECT_EQ(c.x[0], 0);
  EXPECT_EQ(c.x[2], 0);
  EXPECT_EQ(set.determinant, 1);
  EXPECT_EQ(set.diversity, 0);
  // Wachter's answer on the probability moves the same feature, the same way.
  testing::FunctionModel p(
      3, 1,
      [](const std::vector<double>& v) {
        return std::vector<double>{1 / (1 + std::exp(-(v[0] - 2 * v[1] + 0.5 * v[2] - 1)))};
      },
      [](const std::vector<double>& v, std::int64_t) {
        const double s = 1 / (1 + std::exp(-(v[0] - 2 * v[1] + 0.5 * v[2] - 1)));
        return std::vector<double>{s * (1 - s), -2 * s * (1 - s), 0.5 * s * (1 - s)};
      });
  CounterfactualOptions wo;
  wo.wanted = 0.6;
  wo.training = o.training;
  const Counterfactual w = wachter_counterfactual(p, x, wo);
  ASSERT_TRUE(w.valid);
  EXPECT_EQ(w.changed, 1);
  EXPECT_LT(w.x[1], 0);
}

TEST(DiverseCounterfactuals, AllAreValidAndPairwiseDifferentOnASeparableModel) {
  testing::FunctionModel m = logit();
  const std::vector<float> x = {0, 0, 0};
  DiverseCounterfactualOptions o;
  o.count = 4;
  o.training = rows_with_mad({1, 1, 1});
  const DiverseCounterfactuals set = diverse_counterfactuals(m, x, o);
  ASSERT_EQ(set.counterfactuals.size(), 4U);
  EXPECT_EQ(set.validity, 1);
  for (const auto& c : set.counterfactuals) {
    EXPECT_TRUE(c.valid);
    EXPECT_TRUE(in_class_1(c));
    EXPECT_GT(c.outputs[0], 0);
  }
  for (std::size_t i = 0; i < 4; ++i)
    for (std::size_t j = i + 1; j < 4; ++j)
      EXPECT_NE(set.counterfactuals[i].x, set.counterfactuals[j].x) << i << j;
  EXPECT_GT(set.determinant, 0);
  EXPECT_LE(set.determinant, 1);
  EXPECT_GT(set.diversity, 0);
  EXPECT_GT(set.count_diversity, 0);
  EXPECT_LE(set.count_diversity, 1);
  EXPECT_GT(set.proximity, 0);
  EXPECT_GE(set.sparsity, 1);
  EXPECT_LE(set.sparsity, 3);
  EXPECT_GT(set.evaluations, 0);
}

TEST(DiverseCounterfactuals, ImmutableFeaturesNeverChange) {
  testing::FunctionModel m = logit();
  const std::vector<float> x = {0.25f, 0.5f, -0.75f};
  DiverseCounterfactualOptions o;
  o.count = 3;
  o.training = rows_with_mad({1, 1, 1});
  o.immutable = {1};  // the most effective feature: the others must do it
  o.upper = {10, 10, 3};
  const DiverseCounterfactuals set = diverse_counterfactuals(m, x, o);
  EXPECT_EQ(set.validity, 1);
  for (const auto& c : set.counterfactuals) {
    EXPECT_EQ(c.x[1], x[1]);  // bit for bit
    EXPECT_LE(c.x[2], 3);
    EXPECT_TRUE(in_class_1(c));
  }
}

TEST(DiverseCounterfactuals, MultiClassZeroMadAndTheSameSeed) {
  testing::FunctionModel m = three_classes();
  const std::vector<float> x = {1, 0.5f};  // class 0 wins (1 > 0.5 > -1.5)
  DiverseCounterfactualOptions o;
  o.count = 3;
  o.wanted_class = 2;
  // Feature 1: MAD 0 (four of five rows share 0): scaled by its standard deviation instead.
  o.training = {0, 0, 1, 0, -1, 0, 2, 0, -2, 5};
  o.seed = 3;
  const DiverseCounterfactuals a = diverse_counterfactuals(m, x, o);
  EXPECT_NEAR(a.scale[1], 2, 1e-12);  // the std of (0, 0, 0, 0, 5)
  EXPECT_EQ(a.validity, 1);
  for (const auto& c : a.counterfactuals) {
    EXPECT_GT(c.outputs[2], c.outputs[0]);
    EXPECT_GT(c.outputs[2], c.outputs[1]);
    EXPECT_TRUE(std::isfinite(c.distance));
  }
  const DiverseCounterfactuals b = diverse_counterfactuals(m, x, o);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(a.counterfactuals[i].x, b.counterfactuals[i].x);
  EXPECT_EQ(a.determinant, b.determinant);
  o.seed = 4;
  EXPECT_NE(diverse_counterfactuals(m, x, o).counterfactuals[0].x, a.counterfactuals[0].x);
}

TEST(DiverseCounterfactuals, BadInputIsAClearError) {
  testing::FunctionModel m = logit();
  const std::vector<float> x = {0, 0, 0};
  DiverseCounterfactualOptions o;
  o.wanted_class = 2;  // one logit: classes 0 and 1
  EXPECT_THROW(diverse_counterfactuals(m, x, o), Error);
  o.wanted_class = 1;
  o.immutable = {3};
  EXPECT_THROW(diverse_counterfactuals(m, x, o), Error);
  o.immutable = {};
  o.count = 0;
  EXPECT_THROW(diverse_counterfactuals(m, x, o), Error);
}

// Categorical features (DiCE's): set only to the training data's values, compared by mismatch.

bool allowed(float v, const std::vector<float>& values) {
  return std::find(values.begin(), values.end(), v) != values.end();
}

TEST(DiverseCounterfactuals, CategoricalFeaturesTakeOnlyTheTrainingDataValues) {
  // The logistic model z = x0 - 2 x1 + 0.5 x2 - 1 at x = 0 (class 0); x1 categorical with the
  // training values -1, 0, 0.5, 2: class 1 wants x1 low, and -1 is the only value below 0.
  testing::FunctionModel m = logit();
  DiverseCounterfactualOptions o;
  const std::vector<float> codes = {-1, 0, 0.5f, 2};
  for (std::size_t r = 0; r < 8; ++r) {
    o.training.push_back(static_cast<float>(r % 3) - 1);  // x0: -1, 0, 1
    o.training.push_back(codes[r % 4]);
    o.training.push_back(static_cast<float>(r % 2));  // x2: 0, 1
  }
  o.categorical = {1};
  o.count = 4;
  o.seed = 5;
  const std::vector<float> x = {0, 0, 0};
  const DiverseCounterfactuals set = diverse_counterfactuals(m, x, o);
  ASSERT_EQ(set.categorical, (std::vector<std::int64_t>{1}));
  ASSERT_EQ(set.allowed, (std::vector<std::vector<float>>{codes}));
  ASSERT_EQ(set.counterfactuals.size(), 4U);
  EXPECT_EQ(set.validity, 1);
  double diversity = 0;
  for (std::size_t i = 0; i < 4; ++i) {
    const DiverseCounterfactual& c = set.counterfactuals[i];
    EXPECT_TRUE(c.valid && in_class_1(c)) << i;
    EXPECT_TRUE(allowed(c.x[1], codes)) << i << ": " << c.x[1];
    // Distance: the continuous features MAD-scaled, the categorical one 1 if it changed.
    const double expected =
        std::fabs(c.x[0]) / set.scale[0] + (c.x[1] != 0 ? 1 : 0) + std::fabs(c.x[2]) / set.scale[2];
    EXPECT_DOUBLE_EQ(c.distance, expected) << i;
    for (std::size_t j = i + 1; j < 4; ++j) {
      const DiverseCounterfactual& d = set.counterfactuals[j];
      diversity +=
          (std::fabs(static_cast<double>(c.x[0]) - d.x[0]) / set.scale[0] + (c.x[1] != d.x[1] ? 1 : 0) +
           std::fabs(static_cast<double>(c.x[2]) - d.x[2]) / set.scale[2]) /
          3;
    }
  }
  EXPECT_NEAR(set.diversity, diversity / 6, 1e-9);  // diversity uses the mismatch too
  EXPECT_GT(set.determinant, 0);
}

TEST(DiverseCounterfactuals, WhenOnlyTheCategoricalFeatureCanFlipItIsFoundAndSetToTheOneValueThatDoes) {
  // z = 0.2 x0 + 2 x1 - 5, x0 bounded to [-1, 1] (at most 0.2 of the 5 needed), x1 categorical
  // with values 0, 1, 2, 3: only x1 = 3 (z >= 0.8) reaches class 1; x1 = 2 leaves z <= -0.8.
  testing::FunctionModel m = testing::linear({0.2, 2}, -5);
  DiverseCounterfactualOptions o;
  for (int r = 0; r < 8; ++r) {
    o.training.push_back(static_cast<float>(r % 3) - 1);
    o.training.push_back(static_cast<float>(r % 4));
  }
  o.categorical = {1};
  o.lower = {-1, -100};
  o.upper = {1, 100};
  o.count = 2;
  o.seed = 1;
  const DiverseCounterfactuals set = diverse_counterfactuals(m, std::vector<float>{0, 0}, o);
  ASSERT_EQ(set.counterfactuals.size(), 2U);
  EXPECT_EQ(set.validity, 1);
  for (const DiverseCounterfactual& c : set.counterfactuals) {
    EXPECT_TRUE(c.valid);
    EXPECT_EQ(c.x[1], 3);
    EXPECT_GE(c.x[0], -1);
    EXPECT_LE(c.x[0], 1);
  }
  // Without the categorical declaration x1 may take any value (here not 3 exactly).
  o.categorical.clear();
  const DiverseCounterfactuals free_set = diverse_counterfactuals(m, std::vector<float>{0, 0}, o);
  EXPECT_EQ(free_set.validity, 1);
  bool other = false;
  for (const DiverseCounterfactual& c : free_set.counterfactuals)
    other = other || !allowed(c.x[1], {0, 1, 2, 3});
  EXPECT_TRUE(other);
}

TEST(DiverseCounterfactuals, CategoricalFeaturesNeedTrainingRowsAndValidIndices) {
  testing::FunctionModel m = logit();
  DiverseCounterfactualOptions o;
  o.categorical = {1};
  const std::vector<float> x = {0, 0, 0};
  EXPECT_THROW(diverse_counterfactuals(m, x, o), Error);  // no training rows
  o.training = rows_with_mad({1, 1, 1});
  o.categorical = {3};
  EXPECT_THROW(diverse_counterfactuals(m, x, o), Error);
  o.categorical = {1, 1};
  EXPECT_THROW(diverse_counterfactuals(m, x, o), Error);
  // An immutable categorical feature keeps x's value.
  o.categorical = {1};
  o.immutable = {1};
  const DiverseCounterfactuals set = diverse_counterfactuals(m, x, o);
  EXPECT_TRUE(set.categorical.empty());
  for (const DiverseCounterfactual& c : set.counterfactuals) EXPECT_EQ(c.x[1], 0);
}

}  // namespace
}  // namespace tfdebug::interpret
