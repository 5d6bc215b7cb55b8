// Carlini-Wagner L2 on a binary affine classifier, where the smallest perturbation with logit
// margin kappa is (|f| + kappa) / ||w||_2: CW approaches it from above, is no longer than PGD-L2's
// smallest successful eps, keeps the margin, and honours the mask.
#include "tfdebug/robust/carlini_wagner.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "affine_models.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/robust/gradient_attacks.hpp"

namespace tfdebug::robust {
namespace {

using testing::AffineWithLoss;

const std::vector<double> kW = {0.6, -0.8, 0.3};  // ||w||_2 = sqrt(1.09)
constexpr double kB = 0.1;

double f_of(std::span<const float> x) {
  return kB + kW[0] * x[0] + kW[1] * x[1] + kW[2] * x[2];
}

TEST(CarliniWagner, ApproachesTheMinimalL2FromAboveWithTheMargin) {
  AffineWithLoss m(testing::binary(kW, kB));
  const std::vector<float> x = {0.7f, 0.2f, 0.5f, 0.1f, 0.6f, 0.3f};
  const std::vector<std::int64_t> y = {1, 0};
  const double norm = std::sqrt(1.09);
  for (const double kappa : {0.0, 0.2}) {
    const auto r = carlini_wagner_l2(m, x, y, {.clip_min = 0, .clip_max = 1}, {.confidence = kappa});
    for (std::size_t i = 0; i < 2; ++i) {
      const auto xi = std::span(x).subspan(i * 3, 3);
      const double minimal = (std::abs(f_of(xi)) + kappa) / norm;
      const double after = f_of(std::span(r.adversarial).subspan(i * 3, 3));
      EXPECT_EQ(r.success[i], 1);
      EXPECT_GE(r.l2[i], minimal - 1e-5) << "kappa " << kappa;
      EXPECT_LE(r.l2[i], minimal * 1.02 + 1e-3) << "kappa " << kappa;
      EXPECT_GE((y[i] == 1 ? -after : after), kappa - 1e-5) << "the margin";
    }
  }
}

TEST(CarliniWagner, NoLongerThanPgdL2sSmallestSuccessfulEps) {
  AffineWithLoss m(testing::binary(kW, kB));
  const std::vector<float> x = {0.7f, 0.2f, 0.5f, 0.1f, 0.6f, 0.3f, 0.5f, 0.5f, 0.2f};
  const std::vector<std::int64_t> y = {1, 0, 0};
  const AttackSettings s{.clip_min = 0, .clip_max = 1};
  const auto cw = carlini_wagner_l2(m, x, y, s, {});
  for (std::size_t i = 0; i < 3; ++i) {
    double smallest = -1;
    for (double eps = 0.01; eps < 2; eps += 0.01) {
      const auto p =
          pgd(m, std::span(x).subspan(i * 3, 3), std::span(y).subspan(i, 1), s,
              {.norm = Norm::l2, .eps = eps, .step_size = eps / 5, .steps = 20, .random_start = false});
      if (p.success[0] != 0) {
        smallest = eps;
        break;
      }
    }
    ASSERT_GT(smallest, 0);
    EXPECT_EQ(cw.success[i], 1);
    EXPECT_LE(cw.l2[i], smallest) << "example " << i;
  }
}

TEST(CarliniWagner, MaskHonouredAndFiniteRangeRequired) {
  AffineWithLoss m(testing::binary(kW, kB));
  const std::vector<float> x = {0.7f, 0.2f, 0.5f};
  const std::vector<std::int64_t> y = {1};
  const auto r = carlini_wagner_l2(m, x, y, {.clip_min = 0, .clip_max = 1, .mask = {0, 1, 1}}, {});
  EXPECT_EQ(r.adversarial[0], x[0]);
  EXPECT_EQ(r.success[0], 1);
  // Only w_1, w_2 can move it: the minimum is |f| / ||(w_1, w_2)||.
  EXPECT_GE(r.l2[0], std::abs(f_of(x)) / std::sqrt(0.73) - 1e-5);
  EXPECT_THROW(carlini_wagner_l2(m, x, y, {}, {}), Error);
}

}  // namespace
}  // namespace tfdebug::robust
