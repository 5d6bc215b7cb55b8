#include "tfdebug/session/spectral.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <bit>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "tfdebug/core/dtype.hpp"
#include "tfdebug/core/error.hpp"

namespace tfdebug {
namespace {

// numpy.linalg.norm(W, 2) (an SVD) and the stable rank from Debian's python3-numpy (the first
// python3 on PATH may be another one).
std::pair<double, double> numpy_spectral(const std::vector<float>& w, std::int64_t rows, std::int64_t cols) {
  // One file per process and shape: ctest runs the cases in parallel processes.
  const auto path =
      std::filesystem::temp_directory_path() / ("tfdebug_spectral_" + std::to_string(getpid()) + "_" +
                                                std::to_string(rows) + "x" + std::to_string(cols) + ".f32");
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(w.data()), std::streamsize(w.size() * 4));
  const std::string command =
      "/usr/bin/python3 -c \"import numpy as np,sys; W=np.fromfile(sys.argv[1], "
      "dtype=np.float32).astype(np.float64).reshape(" +
      std::to_string(rows) + "," + std::to_string(cols) +
      "); s=np.linalg.norm(W,2); print(repr(float(s)), repr(float((W*W).sum()/s/s)))\" " + path.string();
  FILE* pipe = popen(command.c_str(), "r");
  double sigma = 0;
  double stable = 0;
  EXPECT_EQ(std::fscanf(pipe, "%lf %lf", &sigma, &stable), 2);
  EXPECT_EQ(pclose(pipe), 0);
  std::filesystem::remove(path);
  return {sigma, stable};
}

std::vector<float> gaussian(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

struct Shape {
  std::int64_t rows, cols;
};

class SpectralVsNumpy : public ::testing::TestWithParam<Shape> {};

TEST_P(SpectralVsNumpy, AgreesWithSvd) {
  const Shape shape = GetParam();
  std::vector<float> w =
      gaussian(std::size_t(shape.rows * shape.cols), std::uint32_t(shape.rows * 131 + shape.cols));
  // A spiked spectrum, as trained weights have: a rank-one component on top of noise.
  for (std::int64_t r = 0; r < shape.rows; ++r)
    for (std::int64_t c = 0; c < shape.cols; ++c)
      w[std::size_t(r * shape.cols + c)] += 0.5f * std::sin(float(r)) * std::cos(float(c));
  const auto [sigma, stable] = numpy_spectral(w, shape.rows, shape.cols);
  SpectralOptions options;
  options.max_iterations = 500;
  options.tolerance = 1e-10;
  const SpectralEstimate e =
      estimate_spectral_norm(TensorView(w.data(), DType::f32, {shape.rows, shape.cols}), options);
  EXPECT_TRUE(e.converged);
  EXPECT_NEAR(e.spectral_norm / sigma, 1.0, 1e-6) << "numpy " << sigma << " ours " << e.spectral_norm;
  EXPECT_NEAR(e.stable_rank / stable, 1.0, 1e-5);
  std::printf("  [%lld x %lld] numpy %.9g ours %.9g (rel %.2e, %d iterations)\n",
              static_cast<long long>(shape.rows), static_cast<long long>(shape.cols), sigma, e.spectral_norm,
              std::abs(e.spectral_norm / sigma - 1), e.iterations);
}

INSTANTIATE_TEST_SUITE_P(Shapes, SpectralVsNumpy,
                         ::testing::Values(Shape{16, 16}, Shape{64, 32}, Shape{32, 200}, Shape{256, 128}),
                         [](const ::testing::TestParamInfo<Shape>& shape_info) {
                           return std::to_string(shape_info.param.rows) + "x" +
                                  std::to_string(shape_info.param.cols);
                         });

TEST(Spectral, DefaultOptionsAreCloseAndWarmStartIsCheap) {
  const std::vector<float> w = gaussian(128 * 64, 5);
  const auto [sigma, stable] = numpy_spectral(w, 128, 64);
  const SpectralEstimate first = estimate_spectral_norm(TensorView(w.data(), DType::f32, {128, 64}));
  EXPECT_NEAR(first.spectral_norm / sigma, 1.0, 1e-3);
  SpectralOptions warm;
  warm.start = first.right_vector;
  const SpectralEstimate again = estimate_spectral_norm(TensorView(w.data(), DType::f32, {128, 64}), warm);
  EXPECT_LT(again.iterations, first.iterations);
  EXPECT_NEAR(again.spectral_norm / sigma, 1.0, 1e-3);
}

TEST(Spectral, KnownMatricesAndDtypes) {
  // diag(3, 2, 1) as [3, 3]: sigma 3, stable rank (9 + 4 + 1) / 9.
  const std::vector<float> d = {3, 0, 0, 0, 2, 0, 0, 0, 1};
  const SpectralEstimate e = estimate_spectral_norm(TensorView(d.data(), DType::f32, {3, 3}));
  EXPECT_NEAR(e.spectral_norm, 3.0, 1e-6);
  EXPECT_NEAR(e.stable_rank, 14.0 / 9.0, 1e-5);
  // The same as bf16 (exact in bf16), and a transposed (strided) view.
  std::vector<std::uint16_t> b(9);
  for (std::size_t i = 0; i < 9; ++i)
    b[i] = static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(d[i]) >> 16);
  EXPECT_NEAR(estimate_spectral_norm(TensorView(b.data(), DType::bf16, {3, 3})).spectral_norm, 3.0, 1e-6);
  EXPECT_NEAR(estimate_spectral_norm(TensorView(d.data(), DType::f32, {3, 3}).transposed(0, 1)).spectral_norm,
              3.0, 1e-6);
  // A conv weight [out 2, in 1, 1, 2] is [2, 2].
  const std::vector<double> conv = {1, 0, 0, 4};
  EXPECT_NEAR(estimate_spectral_norm(TensorView(conv.data(), DType::f64, {2, 1, 1, 2})).spectral_norm, 4.0,
              1e-9);
  // Zero matrix: no direction.
  const std::vector<float> zero(6, 0.0f);
  const SpectralEstimate z = estimate_spectral_norm(TensorView(zero.data(), DType::f32, {2, 3}));
  EXPECT_EQ(z.spectral_norm, 0.0);
  EXPECT_EQ(z.stable_rank, 0.0);
}

TEST(Spectral, RejectsVectorsIntegersAndNaN) {
  const std::vector<float> v = {1, 2, 3, std::nanf("")};
  EXPECT_THROW(estimate_spectral_norm(TensorView(v.data(), DType::f32, {4})), Error);
  EXPECT_THROW(estimate_spectral_norm(TensorView(v.data(), DType::f32, {2, 2})), Error);
  const std::vector<std::int32_t> i = {1, 2, 3, 4};
  EXPECT_THROW(estimate_spectral_norm(TensorView(i.data(), DType::i32, {2, 2})), Error);
}

}  // namespace
}  // namespace tfdebug
