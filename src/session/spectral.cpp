#include "tfdebug/session/spectral.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "tfdebug/core/error.hpp"
#include "tfdebug/core/stats.hpp"
#include "tfdebug/core/tensor.hpp"

namespace tfdebug {

namespace {

// Note [Power iteration]: sigma_max(W) is the square root of the largest eigenvalue of W^T W.
// Alternating u = W v / |W v| and v = W^T u / |W^T u| converges to the top singular pair at
// the rate (sigma_2 / sigma_1)^2 per step; |W^T u| is then sigma_max. Sums are in double over
// an f32 (or f64) copy, so the estimate is limited by convergence, not by rounding. Warm starts
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

// sum row[c] * v[c] in double, over eight independent partial sums: a single running sum is one
// long chain of dependent adds (each waits for the last), which held a 128 x 128 estimate at
// ~1.7 G multiply-adds a second; eight chains keep the adder busy and let the compiler use vectors.
template <class T>
double dot(const T* row, const double* v, std::int64_t n) {
  constexpr std::int64_t kChains = 8;
  double partial[kChains] = {};
  std::int64_t c = 0;
  for (; c + kChains <= n; c += kChains) {
    for (std::int64_t k = 0; k < kChains; ++k) partial[k] += static_cast<double>(row[c + k]) * v[c + k];
  }
  double sum = ((partial[0] + partial[1]) + (partial[2] + partial[3])) +
               ((partial[4] + partial[5]) + (partial[6] + partial[7]));
  for (; c < n; ++c) sum += static_cast<double>(row[c]) * v[c];
  return sum;
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
    for (std::int64_t r = 0; r < rows; ++r) u[std::size_t(r)] = dot(w + r * cols, v.data(), cols);
    if (normalise(u) == 0) {  // v is in W's null space: W is zero (or v was unlucky)
      result.iterations = it;
      break;
    }
    std::fill(v.begin(), v.end(), 0.0);
    for (std::int64_t r = 0; r < rows; ++r) {
      const T* row = w + r * cols;
      const double ur = u[std::size_t(r)];
      for (std::int64_t c = 0; c < cols; ++c) v[std::size_t(c)] += static_cast<double>(row[c]) * ur;
    }
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
  // The Frobenius norm and the finiteness check come from the one stats kernel (L2 norm).
  const Stats stats = compute_stats(matrix);
  if (stats.nonfinite() > 0)
    throw Error("spectral norm: the matrix " + matrix.describe() + " holds NaN or Inf");
  const double frobenius = stats.l2;
  const DType work = matrix.dtype() == DType::f64 ? DType::f64 : DType::f32;
  const Tensor copy = Tensor::copy_of(matrix, work);
  if (work == DType::f64) return iterate(copy.values<double>().data(), rows, cols, frobenius, options);
  return iterate(copy.values<float>().data(), rows, cols, frobenius, options);
}

}  // namespace tfdebug
