// Small dense linear systems (KernelSHAP's and LIME's least squares, tens of unknowns).
#pragma once

#include <cmath>
#include <cstddef>
#include <utility>
#include <vector>

#include "tfdebug/core/error.hpp"

namespace tfdebug::interpret::detail {

// Solves A z = b (n x n, row-major) by Gaussian elimination with partial pivoting; tfdebug::Error
// saying `singular` when A is singular.
inline std::vector<double> solve(std::vector<double> a, std::vector<double> b, std::size_t n,
                                 const char* singular) {
  for (std::size_t col = 0; col < n; ++col) {
    std::size_t pivot = col;
    for (std::size_t r = col + 1; r < n; ++r)
      if (std::fabs(a[r * n + col]) > std::fabs(a[pivot * n + col])) pivot = r;
    if (std::fabs(a[pivot * n + col]) < 1e-300) throw Error(singular);
    if (pivot != col) {
      for (std::size_t c = 0; c < n; ++c) std::swap(a[col * n + c], a[pivot * n + c]);
      std::swap(b[col], b[pivot]);
    }
    for (std::size_t r = col + 1; r < n; ++r) {
      const double f = a[r * n + col] / a[col * n + col];
      if (f == 0) continue;
      for (std::size_t c = col; c < n; ++c) a[r * n + c] -= f * a[col * n + c];
      b[r] -= f * b[col];
    }
  }
  std::vector<double> z(n);
  for (std::size_t i = n; i-- > 0;) {
    double s = b[i];
    for (std::size_t c = i + 1; c < n; ++c) s -= a[i * n + c] * z[c];
    z[i] = s / a[i * n + i];
  }
  return z;
}

}  // namespace tfdebug::interpret::detail
