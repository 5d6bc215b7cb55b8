// Products of a row-major f32 matrix with f64 vectors, summed in f64: what power iteration
// (tfdebug/session/spectral.hpp) runs twice an iteration over a weight matrix.
//
//   std::vector<double> u(rows), v(cols);
//   tfdebug::matvec(w, rows, cols, v.data(), u.data());             // u = W v
//   tfdebug::matvec_transposed(w, rows, cols, u.data(), v.data());  // v = W^T u
//
// Each weight is widened to f64 and multiplied and summed in f64 (fused multiply-adds), so the
// result differs from a plain f64 loop's only by rounding in another order. SIMD on the best
// target the CPU has (Highway); no pointer need be aligned.
#pragma once

#include <cstdint>

namespace tfdebug {

// y[r] = sum over c of w[r * cols + c] * x[c], for r < rows.
void matvec(const float* w, std::int64_t rows, std::int64_t cols, const double* x, double* y);
// y[c] = sum over r of w[r * cols + c] * x[r], for c < cols.
void matvec_transposed(const float* w, std::int64_t rows, std::int64_t cols, const double* x, double* y);

}  // namespace tfdebug
