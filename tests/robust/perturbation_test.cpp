// Perturbation testing on models whose answers are known: a constant model (nothing flips), a
// model reading one feature (the only hotspot), a linear classifier under Gaussian noise, where
// P(flip) = Phi(-|f| / (sigma |w|)).
#include "tfdebug/robust/perturbation.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "robust_test_models.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/core/normal.hpp"

namespace tfdebug::robust {
namespace {

using testing::FunctionModel;

std::vector<float> grid_rows(std::int64_t n, std::int64_t d) {
  std::vector<float> rows;
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < d; ++j) rows.push_back(static_cast<float>(std::sin(1.7 * i + 0.9 * j)));
  return rows;
}

TEST(Perturbation, ConstantModelIsFullyRobust) {
  FunctionModel model(
      3, 2,
      [](const std::vector<double>&) {
        return std::vector<double>{1, 0};
      },
      [](const std::vector<double>&, std::int64_t) { return std::vector<double>(3, 0.0); });
  const std::vector<float> rows = grid_rows(10, 3);
  for (const Perturbation kind :
       {Perturbation::gaussian, Perturbation::uniform, Perturbation::salt_and_pepper,
        Perturbation::feature_dropout, Perturbation::token_masking, Perturbation::token_replacement}) {
    PerturbationOptions o;
    o.kind = kind;
    o.intensities = {0, 0.5, 1};
    o.samples = 5;
    const PerturbationReport r = perturbation_test(model, rows, {}, o);
    EXPECT_EQ(r.score, 1) << perturbation_name(kind);
    EXPECT_EQ(r.accuracy_score, 1);
    for (const auto& p : r.points) EXPECT_EQ(p.flip_rate, 0);
    for (const auto& h : r.hotspots) EXPECT_EQ(h.flip_rate, 0);
    EXPECT_TRUE(r.failure_modes.empty());
  }
}

TEST(Perturbation, AModelReadingOneFeatureHasThatFeatureAsTheOnlyHotspot) {
  FunctionModel model = testing::linear_classifier({0, 0, 1, 0}, -0.1);
  const std::vector<float> rows = grid_rows(20, 4);
  for (const Perturbation kind :
       {Perturbation::gaussian, Perturbation::feature_dropout, Perturbation::salt_and_pepper}) {
    PerturbationOptions o;
    o.kind = kind;
    o.intensities = {0, 0.5, 1};
    o.samples = 10;
    o.low = -1;
    const PerturbationReport r = perturbation_test(model, rows, {}, o);
    ASSERT_EQ(r.hotspots.size(), 4u);
    EXPECT_EQ(r.hotspots[0].unit, 2) << perturbation_name(kind);
    EXPECT_GT(r.hotspots[0].flip_rate, 0);
    for (std::size_t k = 1; k < 4; ++k) EXPECT_EQ(r.hotspots[k].flip_rate, 0);
  }
}

TEST(Perturbation, GaussianFlipsOfALinearClassifierMatchTheAnalyticProbabilityAndAreMonotone) {
  const std::vector<double> w = {0.5, -1.0, 2.0};
  const double b = 0.2;
  FunctionModel model = testing::linear_classifier(w, b);
  const std::int64_t n = 40;
  const std::vector<float> rows = grid_rows(n, 3);
  PerturbationOptions o;
  o.intensities = {0, 0.1, 0.2, 0.4, 0.8};
  o.samples = 500;
  o.hotspots = false;
  const PerturbationReport r = perturbation_test(model, rows, {}, o);
  const double norm_w = std::sqrt(0.25 + 1 + 4);
  for (std::size_t k = 0; k < r.points.size(); ++k) {
    const double sigma = o.intensities[k];
    double expected = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      double f = b;
      for (std::size_t j = 0; j < 3; ++j) f += w[j] * rows[static_cast<std::size_t>(i * 3) + j];
      expected += sigma > 0 ? normal_cdf(-std::fabs(f) / (sigma * norm_w)) / n : 0;
    }
    // n x samples Bernoulli draws: 5 standard errors (at most sqrt(1/4 / 20000)).
    EXPECT_NEAR(r.points[k].flip_rate, expected, 5 * std::sqrt(0.25 / (n * o.samples))) << "sigma " << sigma;
    if (k > 0) {  // common random numbers: every flip is monotone in sigma on a linear model
      EXPECT_GE(r.points[k].flip_rate, r.points[k - 1].flip_rate);
    }
  }
  EXPECT_EQ(r.points[0].flip_rate, 0);
  EXPECT_EQ(r.points[0].accuracy, 1);  // no labels: measured against the clean predictions
  std::vector<double> x, y;
  for (const auto& p : r.points) {
    x.push_back(p.intensity);
    y.push_back(p.agreement);
  }
  EXPECT_DOUBLE_EQ(r.score, normalized_area(x, y));
  EXPECT_EQ(r.evaluations, n + n * o.samples * 5);
}

TEST(Perturbation, NormalizedAreaIsTheMeanOverTheRange) {
  const std::vector<double> x = {0, 0.5, 2}, y = {1, 0.5, 0.5};
  // (0.5 * 0.75 + 1.5 * 0.5) / 2
  EXPECT_DOUBLE_EQ(normalized_area(x, y), (0.375 + 0.75) / 2);
}

TEST(Perturbation, FailureModesGroupTrueClassToPrediction) {
  FunctionModel model = testing::linear_classifier({1.0}, 0.0);
  const std::vector<float> rows = {0.5f, -0.5f};
  const std::vector<std::int64_t> labels = {1, 1};  // the second is wrong already
  PerturbationOptions o;
  o.kind = Perturbation::feature_dropout;  // fill 0: f = 0, class 0 (argmax takes the first)
  o.intensities = {1};
  o.samples = 3;
  const PerturbationReport r = perturbation_test(model, rows, labels, o);
  EXPECT_EQ(r.clean_accuracy, 0.5);
  ASSERT_EQ(r.failure_modes.size(), 1u);
  EXPECT_EQ(r.failure_modes[0].from, 1);
  EXPECT_EQ(r.failure_modes[0].to, 0);
  EXPECT_EQ(r.failure_modes[0].count, 6);
  EXPECT_EQ(r.points[0].accuracy, 0);
  EXPECT_EQ(r.points[0].flip_rate, 0.5);
}

TEST(Perturbation, TokenKindsWorkOnWholeTokens) {
  // Input [3 tokens, 2 values]; the model reads token 1's second value.
  class Tokens : public interpret::ForwardModel {
   public:
    std::vector<std::int64_t> input_shape() const override { return {3, 2}; }
    std::int64_t output_size() const override { return 2; }
    void forward(const TensorView& x, std::span<float> out) override {
      const auto* p = static_cast<const float*>(x.data());
      for (std::int64_t i = 0; i < x.shape(0); ++i) {
        out[static_cast<std::size_t>(2 * i)] = 0;
        out[static_cast<std::size_t>(2 * i + 1)] = p[i * 6 + 3] - 0.5f;
      }
    }
  } model;
  const std::vector<float> rows = {0, 0, 0, 1, 0, 0};
  PerturbationOptions o;
  o.kind = Perturbation::token_masking;
  o.intensities = {0, 1};
  o.samples = 4;
  const PerturbationReport r = perturbation_test(model, rows, {}, o);
  EXPECT_TRUE(r.tokens);
  ASSERT_EQ(r.hotspots.size(), 3u);
  EXPECT_EQ(r.hotspots[0].unit, 1);
  EXPECT_EQ(r.hotspots[0].flip_rate, 1);
  EXPECT_EQ(r.points[1].flip_rate, 1);
}

TEST(Perturbation, BadInputIsAnError) {
  FunctionModel model = testing::linear_classifier({1.0, 1.0}, 0.0);
  const std::vector<float> rows = {0.5f, 0.5f};
  PerturbationOptions o;
  o.kind = Perturbation::feature_dropout;
  o.intensities = {0, 2};
  EXPECT_THROW(perturbation_test(model, rows, {}, o), Error);
  o.intensities = {0.5, 0.1};
  EXPECT_THROW(perturbation_test(model, rows, {}, o), Error);
  const std::vector<std::int64_t> labels = {3};
  EXPECT_THROW(perturbation_test(model, rows, labels, {}), Error);
  EXPECT_THROW(parse_perturbation("gausian"), Error);
  EXPECT_EQ(parse_perturbation("salt-and-pepper"), Perturbation::salt_and_pepper);
}

}  // namespace
}  // namespace tfdebug::robust
