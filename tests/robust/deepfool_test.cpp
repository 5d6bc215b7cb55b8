// DeepFool on affine classifiers: one step reaches the boundary of a binary one, ||r|| =
// (|f| + 1e-4) / ||w|| before the 2% overshoot; on three classes it finds the distance a brute-force
// search over directions finds.
#include "tfdebug/robust/deepfool.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "affine_models.hpp"
#include "tfdebug/core/error.hpp"

namespace tfdebug::robust {
namespace {

using testing::Affine;
using testing::AffineWithLoss;

TEST(DeepFool, BinaryAffineInOneStep) {
  AffineWithLoss m(testing::binary({3, -4}, 1));  // ||w|| = 5
  const std::vector<float> x = {2, 1};            // f = 3: class 1, 0.6 from the boundary
  const std::vector<std::int64_t> y = {1};
  const auto r = deepfool(m, x, y, {}, {.steps = 1});
  EXPECT_EQ(r.success[0], 1);
  EXPECT_NEAR(r.l2[0], 1.02 * (3 + 1e-4) / 5, 1e-6);
  // Along -w.
  EXPECT_NEAR((r.adversarial[0] - x[0]) / (r.adversarial[1] - x[1]), 3.0 / -4.0, 1e-5);
  const auto more = deepfool(m, x, y, {}, {});  // with 50 steps allowed it stops after the first
  EXPECT_EQ(more.adversarial, r.adversarial);
  EXPECT_EQ(more.queries, 1 + 1 + 1 + 1);  // clean, step 1, the check that ends, final
}

TEST(DeepFool, ThreeClassesMatchBruteForce) {
  Affine m({{1.0, 0.2}, {-0.3, 1.1}, {-0.8, -0.9}}, {0.1, -0.2, 0.05});
  const std::vector<float> x = {0.9f, 0.1f, -0.2f, 0.8f, -0.5f, -0.6f, 0.3f, 0.25f};
  std::vector<std::int64_t> y;
  for (std::size_t i = 0; i < 4; ++i) y.push_back(m.predict(std::span(x).subspan(i * 2, 2)));
  const auto r = deepfool(m, x, y, {}, {.overshoot = 0});
  for (std::size_t i = 0; i < 4; ++i) {
    // Brute force: for 7200 directions, bisect the radius where the label changes.
    double best = 1e9;
    for (int a = 0; a < 7200; ++a) {
      const double t = 2 * std::numbers::pi * a / 7200;
      double lo = 0, hi = 10;
      for (int it = 0; it < 60; ++it) {
        const double mid = (lo + hi) / 2;
        const std::vector<float> p = {static_cast<float>(x[i * 2] + mid * std::cos(t)),
                                      static_cast<float>(x[i * 2 + 1] + mid * std::sin(t))};
        (m.predict(p) != y[i] ? hi : lo) = mid;
      }
      best = std::min(best, hi);
    }
    EXPECT_EQ(r.success[i], 1) << i;
    EXPECT_NEAR(r.l2[i], best, 2e-3) << "example " << i;  // 1e-4 slack + the angular grid
    EXPECT_GE(r.l2[i], best - 1e-5) << "no shorter than the true minimum";
  }
}

TEST(DeepFool, MaskedElementsStayAndAlreadyWrongIsLeft) {
  Affine m({{1.0, 0.2, 0.5}, {-0.3, 1.1, 0.4}, {-0.8, -0.9, 1.0}}, {0, 0, 0});
  const std::vector<float> x = {0.9f, 0.1f, 0.3f, 0.9f, 0.1f, 0.3f};
  const std::vector<std::int64_t> y = {0, 2};  // the second is misclassified already
  const auto r = deepfool(m, x, y, {.clip_min = -2, .clip_max = 2, .mask = {1, 0, 1}}, {});
  EXPECT_EQ(r.success[0], 1);
  EXPECT_EQ(r.adversarial[1], x[1]);
  EXPECT_EQ(r.success[1], 1);
  EXPECT_EQ(r.l2[1], 0);
  EXPECT_THROW(deepfool(m, x, y, {.targets = {1}}, {}), Error);
}

}  // namespace
}  // namespace tfdebug::robust
