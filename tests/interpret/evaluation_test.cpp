// Attribution quality measures: the reference's tests (section 6) and analytic curves.
#include "tfdebug/interpret/evaluation.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "test_models.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/interpret/gradient_attribution.hpp"

namespace tfdebug::interpret {
namespace {

using testing::FunctionModel;

TEST(Infidelity, ALinearModelsGradientIsPerfect) {
  FunctionModel m = testing::linear({0.5, -2, 3}, 0.25);
  const std::vector<float> x = {2, 1, -1};
  const std::vector<double> gradient = {0.5, -2, 3};
  EXPECT_NEAR(infidelity(m, x, 0, gradient), 0.0, 1e-10);
  // Twice the gradient is off by its scale, unless normalised (beta = 1/2 undoes it).
  const std::vector<double> twice = {1, -4, 6};
  EXPECT_GT(infidelity(m, x, 0, twice), 0.01);
  InfidelityOptions o;
  o.normalize = true;
  EXPECT_NEAR(infidelity(m, x, 0, twice, o), 0.0, 1e-10);
  // A wrong sign is bad, unless normalised (beta = -1: the measure sees only the direction's line).
  const std::vector<double> wrong = {-0.5, 2, -3};
  EXPECT_GT(infidelity(m, x, 0, wrong), 0.01);
  EXPECT_NEAR(infidelity(m, x, 0, wrong, o), 0.0, 1e-10);
  // A direction that is not the gradient's stays wrong however it is scaled.
  const std::vector<double> other = {3, 0.5, -2};
  EXPECT_GT(infidelity(m, x, 0, other, o), 0.01);
}

TEST(Infidelity, SeededAndChecked) {
  FunctionModel r = testing::reference_r();
  const std::vector<float> x = {1, 2};
  const std::vector<double> phi = gradient_x_input(r, x, 0).values;
  InfidelityOptions o;
  o.seed = 4;
  EXPECT_EQ(infidelity(r, x, 0, phi, o), infidelity(r, x, 0, phi, o));
  EXPECT_THROW(infidelity(r, x, 0, std::vector<double>{1}, o), Error);
}

TEST(SensitivityMax, ALinearModelsGradientDoesNotMove) {
  FunctionModel m = testing::linear({0.5, -2, 3}, 0.25);
  const std::vector<float> x = {2, 1, -1};
  const auto explain = [&](std::span<const float> at) { return gradient_x_input(m, at, 0).values; };
  const auto saliency = [&](std::span<const float>) { return std::vector<double>{0.5, -2, 3}; };
  EXPECT_EQ(sensitivity_max(saliency, x), 0.0);
  // Gradient x Input moves with x: at most radius * |w| / |w * x| in each direction.
  const double s = sensitivity_max(explain, x);
  EXPECT_GT(s, 0.0);
  EXPECT_LT(s, 0.02 * std::sqrt(0.25 + 4 + 9) / std::sqrt(1.0 + 4 + 9) + 1e-9);
}

TEST(SensitivityMax, AGradientAcrossAKinkJumps) {
  // R's gradient is (2, 0) below x2 = 1.5 and (2, 2) above: from 1.49 a draw past the kink
  // changes it by |(0, 2)| / |(2, 0)| = 1.
  FunctionModel r = testing::reference_r();
  const std::vector<float> x = {1, 1.49f};
  SensitivityOptions o;
  o.samples = 50;
  const auto gradient = [&](std::span<const float> at) {
    const std::vector<double> g = gradient_x_input(r, at, 0).values;
    return std::vector<double>{g[0] / at[0], g[1] / at[1]};  // back to the plain gradient
  };
  EXPECT_NEAR(sensitivity_max(gradient, x, o), 1.0, 1e-6);
}

TEST(DeletionInsertion, LinearCurvesAreExact) {
  // f = 4 x0 + 3 x1 + 2 x2 + x3 at ones: removing the best first gives 10, 6, 3, 1, 0.
  FunctionModel m = testing::linear({4, 3, 2, 1}, 0);
  const std::vector<float> x = {1, 1, 1, 1};
  const std::vector<double> phi = {4, 3, 2, 1};
  CurveOptions o;
  o.steps = 4;
  const Curve del = deletion_curve(m, x, 0, phi, o);
  EXPECT_EQ(del.fraction, (std::vector<double>{0, 0.25, 0.5, 0.75, 1}));
  EXPECT_EQ(del.output, (std::vector<double>{10, 6, 3, 1, 0}));
  EXPECT_DOUBLE_EQ(del.area, 3.75);
  const Curve ins = insertion_curve(m, x, 0, phi, o);
  EXPECT_EQ(ins.output, (std::vector<double>{0, 4, 7, 9, 10}));
  EXPECT_DOUBLE_EQ(ins.area, 6.25);
  // The reversed ranking is worse on both.
  const std::vector<double> reversed = {1, 2, 3, 4};
  EXPECT_DOUBLE_EQ(deletion_curve(m, x, 0, reversed, o).area, 6.25);
  EXPECT_DOUBLE_EQ(insertion_curve(m, x, 0, reversed, o).area, 3.75);
}

TEST(DeletionInsertion, ReferenceSoftmaxAndBatches) {
  // Two logits (x0 - x1, 0): softmax of the first over deletion towards a reference of -1s.
  FunctionModel m(
      2, 2,
      [](const std::vector<double>& x) {
        return std::vector<double>{x[0] - x[1], 0};
      },
      [](const std::vector<double>&, std::int64_t) {
        return std::vector<double>{1, -1};
      });
  const std::vector<float> x = {2, 0};
  CurveOptions o;
  o.steps = 2;
  o.softmax = true;
  o.reference = {-1, -1};
  o.max_batch = 1;
  const Curve c = deletion_curve(m, x, 0, std::vector<double>{1, 0}, o);
  const auto p = [](double z) { return 1 / (1 + std::exp(-z)); };
  EXPECT_NEAR(c.output[0], p(2), 1e-6);   // (2, 0)
  EXPECT_NEAR(c.output[1], p(-1), 1e-6);  // (-1, 0)
  EXPECT_NEAR(c.output[2], p(0), 1e-6);   // (-1, -1)
  EXPECT_EQ(m.largest_batch, 1);
  o.reference = {0};
  EXPECT_THROW(deletion_curve(m, x, 0, std::vector<double>{1, 0}, o), Error);
}

}  // namespace
}  // namespace tfdebug::interpret
