#include "tfdebug/core/matvec.hpp"

#include <gtest/gtest.h>
#include <hwy/targets.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace tfdebug {
namespace {

struct Shape {
  std::int64_t rows, cols;
};
// Row counts around the kernel's blocks of four (and two) rows, column counts around every
// target's vector length (2 to 8 doubles), and the rule's usual 128 x 128.
const Shape kShapes[] = {{1, 1},  {1, 9}, {2, 3},   {3, 5},   {4, 8},     {5, 17},
                         {7, 33}, {8, 2}, {9, 100}, {16, 16}, {128, 128}, {33, 7}};

// W x and W^T x by plain loops in long double, the reference, and for each output the sum of
// its terms' magnitudes (what f64 rounding is relative to).
struct Reference {
  std::vector<long double> y;
  std::vector<double> magnitude;
};
Reference reference(const float* w, const Shape& s, const std::vector<double>& x, bool transposed) {
  const std::size_t n = std::size_t(transposed ? s.cols : s.rows);
  Reference out{std::vector<long double>(n, 0.0L), std::vector<double>(n, 0.0)};
  for (std::int64_t r = 0; r < s.rows; ++r) {
    for (std::int64_t c = 0; c < s.cols; ++c) {
      const long double term = static_cast<long double>(w[r * s.cols + c]) *
                               static_cast<long double>(x[std::size_t(transposed ? r : c)]);
      const std::size_t i = std::size_t(transposed ? c : r);
      out.y[i] += term;
      out.magnitude[i] += std::abs(static_cast<double>(term));
    }
  }
  return out;
}

// Small integers: every product and sum is exact in f64, so every order of additions gives the
// same result, bit for bit, on every target.
TEST(MatVec, IntegersAreExactOnEverySimdTarget) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> small(-8, 8);
  for (const std::int64_t target : hwy::SupportedAndGeneratedTargets()) {
    SCOPED_TRACE(hwy::TargetName(target));
    hwy::SetSupportedTargetsForTest(target);
    for (const Shape& s : kShapes) {
      for (const std::int64_t offset : {0, 1}) {  // a matrix that starts one float past alignment
        std::vector<float> storage(std::size_t(offset + s.rows * s.cols));
        for (float& v : storage) v = static_cast<float>(small(rng));
        const float* w = storage.data() + offset;
        std::vector<double> x(std::size_t(std::max(s.rows, s.cols)));
        for (double& v : x) v = small(rng);
        std::vector<double> y(std::size_t(s.rows), -1.0), yt(std::size_t(s.cols), -1.0);
        matvec(w, s.rows, s.cols, x.data(), y.data());
        matvec_transposed(w, s.rows, s.cols, x.data(), yt.data());
        const auto want = reference(w, s, x, false).y;
        const auto want_t = reference(w, s, x, true).y;
        for (std::int64_t r = 0; r < s.rows; ++r)
          EXPECT_EQ(y[std::size_t(r)], static_cast<double>(want[std::size_t(r)]))
              << s.rows << "x" << s.cols << " offset " << offset << " row " << r;
        for (std::int64_t c = 0; c < s.cols; ++c)
          EXPECT_EQ(yt[std::size_t(c)], static_cast<double>(want_t[std::size_t(c)]))
              << s.rows << "x" << s.cols << " offset " << offset << " column " << c;
      }
    }
  }
  hwy::SetSupportedTargetsForTest(0);  // back to what the CPU supports
}

// Gaussian weights and vectors: within f64 rounding of the exact sums (a few units in the last
// place of the sum of the terms' magnitudes), on every target.
TEST(MatVec, GaussianAgreesWithAPlainLoopToF64RoundingOnEverySimdTarget) {
  std::mt19937 rng(11);
  std::normal_distribution<double> normal(0.0, 1.0);
  for (const std::int64_t target : hwy::SupportedAndGeneratedTargets()) {
    SCOPED_TRACE(hwy::TargetName(target));
    hwy::SetSupportedTargetsForTest(target);
    for (const Shape& s : kShapes) {
      std::vector<float> w(std::size_t(s.rows * s.cols));
      for (float& v : w) v = static_cast<float>(normal(rng));
      std::vector<double> x(std::size_t(std::max(s.rows, s.cols)));
      for (double& v : x) v = normal(rng);
      std::vector<double> y(std::size_t(s.rows)), yt(std::size_t(s.cols));
      matvec(w.data(), s.rows, s.cols, x.data(), y.data());
      matvec_transposed(w.data(), s.rows, s.cols, x.data(), yt.data());
      // The bound: 4 * n * eps * sum |terms|, n the terms in one sum (a loose form of the
      // classical bound for recursive summation).
      for (const bool transposed : {false, true}) {
        const Reference want = reference(w.data(), s, x, transposed);
        const std::vector<double>& got = transposed ? yt : y;
        const double terms = double(transposed ? s.rows : s.cols);
        for (std::size_t i = 0; i < got.size(); ++i)
          EXPECT_NEAR(got[i], double(want.y[i]), 4.0 * terms * 1.2e-16 * want.magnitude[i])
              << s.rows << "x" << s.cols << (transposed ? " transposed, " : ", ") << "output " << i;
      }
    }
  }
  hwy::SetSupportedTargetsForTest(0);
}

// NaN and Inf go through as IEEE arithmetic has them (power iteration rejects such matrices
// before it multiplies; the kernel itself does not hide them).
TEST(MatVec, NonFiniteWeightsPropagate) {
  const std::vector<float> w = {1.0f, NAN, 2.0f, 3.0f, INFINITY, 0.0f};  // 2 x 3
  const std::vector<double> x = {1.0, 1.0, 1.0};
  std::vector<double> y(2), yt(3);
  matvec(w.data(), 2, 3, x.data(), y.data());
  EXPECT_TRUE(std::isnan(y[0]));
  EXPECT_EQ(y[1], INFINITY);
  matvec_transposed(w.data(), 2, 3, x.data(), yt.data());
  EXPECT_EQ(yt[0], 4.0);
  EXPECT_TRUE(std::isnan(yt[1]));
  EXPECT_EQ(yt[2], 2.0);
}

}  // namespace
}  // namespace tfdebug
