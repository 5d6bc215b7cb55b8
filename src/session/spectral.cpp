#include "tfdebug/session/spectral.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "tfdebug/core/error.hpp"
#include "tfdebug/core/matvec.hpp"
#include "tfdebug/core/stats.hpp"
#include "tfdebug/core/tensor.hpp"

namespace tfdebug {

namespace {

// Note [Power iteration]: sigma_max(W) is the square root of the largest eigenvalue of W^T W.
// Alternating u = W v / |W v| and v = W^T u / |W^T u| converges to the top singular pair at
// the rate (sigma_2 / sigma_1)^2 per step; |W^T u| is then sigma_max. Sums are in double over
// the f32 (or f64) values, so the estimate is limited by convergence, not by rounding. Warm starts
// from the last measurement of the same matrix make later measurements take a few steps.

std::vector<double> default_start(std::int64_t n) {
  // A fixed pseudo-random vector (SplitMix64): never orthogonal to the top singular vector in
  // practice, unlike an all-ones start for matrices with zero-mean rows.
  std::vector<double> v(static_cast<std::size_t>(n));
  std::uint64_t state = 0x9E3779B97F4A7C15ULL;
  for (double& x : v) {
    state += 0x9E3779B97F4A7C15ULL;
    std::uint64_t z = state;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    x = static_cast<double>(z >> 11) / 9007199254740992.0 - 0.5;
  }
  return v;
}

double normalise(std::vector<double>& v) {
  double sum = 0;
  for (const double x : v) sum += x * x;
  const double norm = std::sqrt(sum);
  if (norm > 0) {
    for (double& x : v) x /= norm;
  }
  return norm;
}

// W v and W^T u for a row-major matrix of T: f32 through the SIMD kernels (tfdebug/core/matvec.hpp),
// f64 by plain loops.
void times(const float* w, std::int64_t rows, std::int64_t cols, const double* v, double* u) {
  matvec(w, rows, cols, v, u);
}
void times_transposed(const float* w, std::int64_t rows, std::int64_t cols, const double* u, double* v) {
  matvec_transposed(w, rows, cols, u, v);
}
void times(const double* w, std::int64_t rows, std::int64_t cols, const double* v, double* u) {
  for (std::int64_t r = 0; r < rows; ++r) {
    const double* row = w + r * cols;
    double sum = 0;
    for (std::int64_t c = 0; c < cols; ++c) sum += row[c] * v[c];
    u[r] = sum;
  }
}
void times_transposed(const double* w, std::int64_t rows, std::int64_t cols, const double* u, double* v) {
  std::fill(v, v + cols, 0.0);
  for (std::int64_t r = 0; r < rows; ++r) {
    const double* row = w + r * cols;
    for (std::int64_t c = 0; c < cols; ++c) v[c] += row[c] * u[r];
  }
}

template <class T>
SpectralEstimate iterate(const T* w, std::int64_t rows, std::int64_t cols, double frobenius,
                         const SpectralOptions& options) {
  SpectralEstimate result;
  result.frobenius_norm = frobenius;
  std::vector<double> v =
      options.start.size() == static_cast<std::size_t>(cols) ? options.start : default_start(cols);
  if (normalise(v) == 0) {
    v = default_start(cols);
    normalise(v);
  }
  std::vector<double> u(static_cast<std::size_t>(rows));
  double sigma = 0;
  for (int it = 1; it <= options.max_iterations; ++it) {
    times(w, rows, cols, v.data(), u.data());
    if (normalise(u) == 0) {  // v is in W's null space: W is zero (or v was unlucky)
      result.iterations = it;
      break;
    }
    times_transposed(w, rows, cols, u.data(), v.data());
    const double next = normalise(v);
    result.iterations = it;
    const bool converged = std::abs(next - sigma) <= options.tolerance * next;
    sigma = next;
    if (converged) {
      result.converged = true;
      break;
    }
  }
  result.spectral_norm = sigma;
  result.stable_rank = sigma > 0 ? (frobenius * frobenius) / (sigma * sigma) : 0.0;
  result.right_vector = std::move(v);
  return result;
}

}  // namespace

SpectralEstimate estimate_spectral_norm(TensorView matrix, const SpectralOptions& options) {
  if (matrix.rank() < 2)
    throw Error("spectral norm: expected a matrix (rank >= 2), got " + matrix.describe());
  if (!is_floating(matrix.dtype()))
    throw Error("spectral norm: expected a floating-point matrix, got " + matrix.describe());
  const std::int64_t rows = matrix.shape(0);
  const std::int64_t cols = rows == 0 ? 0 : matrix.numel() / rows;
  if (rows == 0 || cols == 0) return {};
  // The Frobenius norm and the finiteness check in one pass (the range-and-L2 kernel).
  const Extremes extremes = compute_range_l2(matrix);
  if (extremes.nonfinite) throw Error("spectral norm: the matrix " + matrix.describe() + " holds NaN or Inf");
  const double frobenius = extremes.l2;
  const DType work = matrix.dtype() == DType::f64 ? DType::f64 : DType::f32;
  // A contiguous f32 matrix (every f32 weight of a model) is read where it is.
  if (work == DType::f32 && matrix.dtype() == DType::f32 && matrix.is_contiguous())
    return iterate(static_cast<const float*>(matrix.data()), rows, cols, frobenius, options);
  const Tensor copy = Tensor::copy_of(matrix, work);
  if (work == DType::f64) return iterate(copy.values<double>().data(), rows, cols, frobenius, options);
  return iterate(copy.values<float>().data(), rows, cols, frobenius, options);
}

}  // namespace tfdebug
