// FGSM and PGD on affine classifiers, where the answers are known: FGSM's step is eps sign(w) and
// it flips exactly past |f| / ||w||_1; one PGD step of alpha = eps without a random start is FGSM;
// PGD stays in its ball at every step and is at least as strong as FGSM.
#include "tfdebug/robust/gradient_attacks.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "affine_models.hpp"
#include "tfdebug/core/error.hpp"

namespace tfdebug::robust {
namespace {

using testing::Affine;
using testing::AffineWithLoss;
using testing::binary;

const std::vector<double> kW = {0.5, -1.0, 2.0, 0.25};
constexpr double kB = -0.3;

double f_of(std::span<const float> x) {
  double f = kB;
  for (std::size_t j = 0; j < x.size(); ++j) f += kW[j] * x[j];
  return f;
}

// n points of 4 features in [-1, 1], and their labels under the binary model.
std::vector<float> points(std::int64_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> x(static_cast<std::size_t>(n * 4));
  for (float& v : x) v = u(rng);
  return x;
}
std::vector<std::int64_t> labels_of(Affine& m, std::span<const float> x) {
  std::vector<std::int64_t> y;
  for (std::size_t i = 0; i < x.size() / 4; ++i) y.push_back(m.predict(x.subspan(i * 4, 4)));
  return y;
}

TEST(Fgsm, StepIsEpsTimesSignOfW) {
  Affine m = binary(kW, kB);
  const std::vector<float> x = {0.8f, -0.2f, 0.5f, 0.1f};  // f = 1.525 > 0: class 1
  const std::vector<std::int64_t> y = {1};
  const auto r = fgsm(m, x, y, {}, {.eps = 0.1});
  for (std::size_t j = 0; j < 4; ++j) {
    // Untargeted: the cross-entropy of class 1 grows as f falls, so the step is -eps sign(w).
    EXPECT_FLOAT_EQ(r.adversarial[j] - x[j], static_cast<float>(-0.1 * (kW[j] > 0 ? 1 : -1))) << j;
  }
  EXPECT_DOUBLE_EQ(r.l0[0], 4);
  EXPECT_NEAR(r.linf[0], 0.1, 1e-7);
  EXPECT_NEAR(r.l2[0], 0.2, 1e-6);
  EXPECT_EQ(r.queries, 4);  // the clean forward, a backward per class ([G] only: 2), the final forward
}

TEST(Fgsm, FlipsExactlyPastTheMinimalLinfDistance) {
  Affine m = binary(kW, kB);
  const std::vector<float> x = {0.8f, -0.2f, 0.5f, 0.1f};
  const std::vector<std::int64_t> y = {1};
  const double minimal = std::abs(f_of(x)) / (0.5 + 1.0 + 2.0 + 0.25);  // |f| / ||w||_1
  EXPECT_EQ(fgsm(m, x, y, {}, {.eps = minimal * 0.999}).success[0], 0);
  EXPECT_EQ(fgsm(m, x, y, {}, {.eps = minimal * 1.001}).success[0], 1);
}

TEST(Pgd, OneStepOfEpsWithoutRandomStartIsFgsm) {
  Affine m = binary(kW, kB);
  const auto x = points(50, 1);
  const auto y = labels_of(m, x);
  const AttackSettings s{.clip_min = -1.2f, .clip_max = 1.2f};
  const auto f = fgsm(m, x, y, s, {.eps = 0.3});
  const auto p = pgd(m, x, y, s, {.eps = 0.3, .step_size = 0.3, .steps = 1, .random_start = false});
  EXPECT_EQ(p.adversarial, f.adversarial);
  EXPECT_EQ(p.success, f.success);
}

TEST(Pgd, LinfIsAtLeastAsStrongAsFgsm) {
  Affine m = binary(kW, kB);
  const auto x = points(200, 2);
  const auto y = labels_of(m, x);
  for (const double eps : {0.05, 0.1, 0.2, 0.4}) {
    const auto f = fgsm(m, x, y, {}, {.eps = eps});
    const auto p = pgd(m, x, y, {.seed = 7}, {.eps = eps, .step_size = eps / 4, .steps = 20});
    std::int64_t fs = 0, ps = 0;
    for (std::size_t i = 0; i < y.size(); ++i) {
      EXPECT_GE(p.success[i], f.success[i]) << "eps " << eps << " example " << i;
      // The margin toward the other class is at least FGSM's.
      const double sign = y[i] == 1 ? 1 : -1;
      EXPECT_LE(sign * f_of(std::span(p.adversarial).subspan(i * 4, 4)),
                sign * f_of(std::span(f.adversarial).subspan(i * 4, 4)) + 1e-5);
      fs += f.success[i];
      ps += p.success[i];
    }
    EXPECT_GE(ps, fs);
  }
}

TEST(Pgd, StaysInTheBallAtEveryStep) {
  Affine m = binary(kW, kB);
  const auto x = points(20, 3);
  const auto y = labels_of(m, x);
  const AttackSettings s{.clip_min = -1, .clip_max = 1, .max_batch = 7, .seed = 11};
  for (const Norm norm : {Norm::linf, Norm::l2}) {
    const double eps = norm == Norm::linf ? 0.15 : 0.4;
    std::int64_t calls = 0;
    PgdOptions o{.norm = norm, .eps = eps, .step_size = eps / 2, .steps = 12, .restarts = 2};
    o.on_step = [&](std::int64_t i, std::int64_t step, std::span<const float> a) {
      ++calls;
      EXPECT_GE(step, 1);
      double l2 = 0, linf = 0;
      for (std::size_t j = 0; j < 4; ++j) {
        const double d = a[j] - x[static_cast<std::size_t>(i) * 4 + j];
        l2 += d * d;
        linf = std::max(linf, std::abs(d));
        EXPECT_GE(a[j], -1.0f);
        EXPECT_LE(a[j], 1.0f);
      }
      EXPECT_LE(norm == Norm::linf ? linf : std::sqrt(l2), eps * (1 + 1e-6))
          << "example " << i << " step " << step;
    };
    const auto r = pgd(m, x, y, s, o);
    EXPECT_GE(calls, 20 * 12);
    for (std::size_t i = 0; i < y.size(); ++i)
      EXPECT_LE(norm == Norm::linf ? r.linf[i] : r.l2[i], eps * (1 + 1e-6));
  }
}

TEST(Pgd, SameSeedSameResultWhateverTheBatch) {
  Affine m = binary(kW, kB);
  const auto x = points(30, 4);
  const auto y = labels_of(m, x);
  const PgdOptions o{.norm = Norm::l2, .eps = 0.3, .step_size = 0.05, .steps = 5};
  const auto a = pgd(m, x, y, {.max_batch = 64, .seed = 5}, o);
  const auto b = pgd(m, x, y, {.max_batch = 4, .seed = 5}, o);
  const auto c = pgd(m, x, y, {.max_batch = 64, .seed = 6}, o);
  EXPECT_EQ(a.adversarial, b.adversarial);
  EXPECT_NE(a.adversarial, c.adversarial);
  EXPECT_LE(m.largest_batch, 64);
}

TEST(Pgd, LossTierAndPerClassGradientsAgree) {
  Affine plain = binary(kW, kB);
  AffineWithLoss tier(binary(kW, kB));
  const auto x = points(25, 5);
  const auto y = labels_of(plain, x);
  const PgdOptions o{.eps = 0.2, .step_size = 0.05, .steps = 6};
  const auto a = pgd(plain, x, y, {.seed = 1}, o);
  const auto b = pgd(tier, x, y, {.seed = 1}, o);
  for (std::size_t j = 0; j < a.adversarial.size(); ++j)
    EXPECT_NEAR(a.adversarial[j], b.adversarial[j], 1e-6);
  // [G] pays a backward pass per class: 2 here; [G+] one.
  EXPECT_EQ(a.queries, 25 + 6 * 25 * 2 + 25);
  EXPECT_EQ(b.queries, 25 + 6 * 25 + 25);
}

TEST(Attacks, MasksAndRangesAreHonoured) {
  Affine m = binary(kW, kB);
  const auto x = points(40, 6);
  const auto y = labels_of(m, x);
  const AttackSettings s{.clip_min = -1, .clip_max = 1, .mask = {1, 0, 1, 0}, .seed = 2};
  const auto f = fgsm(m, x, y, s, {.eps = 0.5});
  const auto p = pgd(m, x, y, s, {.norm = Norm::l2, .eps = 1.0, .step_size = 0.2, .steps = 10});
  for (const auto* r : {&f, &p}) {
    for (std::size_t i = 0; i < y.size(); ++i) {
      EXPECT_EQ(r->adversarial[i * 4 + 1], x[i * 4 + 1]);
      EXPECT_EQ(r->adversarial[i * 4 + 3], x[i * 4 + 3]);
      EXPECT_LE(r->l0[i], 2);
      for (std::size_t j = 0; j < 4; ++j) {
        EXPECT_GE(r->adversarial[i * 4 + j], -1.0f);
        EXPECT_LE(r->adversarial[i * 4 + j], 1.0f);
      }
    }
  }
}

TEST(Pgd, TargetedReachesTheTarget) {
  // Three classes in the plane; push everything to class 2.
  Affine m({{1, 0}, {0, 1}, {-1, -1}}, {0, 0, 0});
  const std::vector<float> x = {1, 0.2f, 0.1f, 1, 0.5f, 0.4f};
  const std::vector<std::int64_t> y = {0, 1, 0};
  const auto r = pgd(m, x, y, {.targets = {2}}, {.eps = 2, .step_size = 0.2, .steps = 30});
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(r.success[i], 1);
    EXPECT_EQ(r.predicted_after[i], 2);
    EXPECT_GT(r.confidence_after[i], r.confidence_before[i]);
  }
  const auto s = summarize(r);
  EXPECT_DOUBLE_EQ(s.success_rate, 1.0);
  EXPECT_EQ(s.l2.count, 3);
  EXPECT_LE(s.l2.min, s.l2.median);
}

TEST(Attacks, BadInputIsAnError) {
  Affine m = binary(kW, kB);
  const std::vector<float> x = {0.1f, 0.2f, 0.3f, 0.4f};
  EXPECT_THROW(fgsm(m, x, std::vector<std::int64_t>{2}, {}, {}), Error);  // not a class
  EXPECT_THROW(fgsm(m, x, std::vector<std::int64_t>{0, 1}, {}, {}), Error);
  EXPECT_THROW(fgsm(m, std::span(x).first(3), std::vector<std::int64_t>{0}, {}, {}), Error);
  EXPECT_THROW(fgsm(m, x, std::vector<std::int64_t>{0}, {.clip_min = 0.25f, .clip_max = 1}, {}), Error);
  EXPECT_THROW(fgsm(m, x, std::vector<std::int64_t>{0}, {.mask = {1, 1}}, {}), Error);
  EXPECT_THROW(pgd(m, x, std::vector<std::int64_t>{0}, {}, {.steps = 0}), Error);
}

}  // namespace
}  // namespace tfdebug::robust
