// matvec, matvec_transposed (matvec.hpp): an f32 matrix times f64 vectors, in f64, through
// Highway. Power iteration (src/session/spectral.cpp) runs both twice an iteration, up to 30
// iterations a measurement; compiled for the baseline x86-64 target (SSE2: two doubles a
// vector) a plain loop held a 128 x 128 estimate at ~300 us. Here each vector of f32 weights is
// widened to f64 in two halves and multiply-added into f64 accumulators, on the best target.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "matvec_kernel.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <cstdint>

HWY_BEFORE_NAMESPACE();
namespace tfdebug::detail {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// y[r] = row r of w . x: two f64 accumulators per row (the halves of each f32 vector), four rows
// at a time so that the loads of x serve four rows.
void MatVec(const float* HWY_RESTRICT w, std::int64_t rows, std::int64_t cols, const double* HWY_RESTRICT x,
            double* HWY_RESTRICT y) {
  const hn::ScalableTag<double> dd;
  const hn::Rebind<float, decltype(dd)> df;  // as many floats as a vector has doubles
  const std::int64_t lanes = static_cast<std::int64_t>(hn::Lanes(dd));
  const std::int64_t body = cols - cols % lanes;
  auto dot_tail = [&](const float* row, std::int64_t from) {
    double sum = 0;
    for (std::int64_t c = from; c < cols; ++c) sum += static_cast<double>(row[c]) * x[c];
    return sum;
  };
  std::int64_t r = 0;
  for (; r + 4 <= rows; r += 4) {
    const float* r0 = w + r * cols;
    const float* r1 = r0 + cols;
    const float* r2 = r1 + cols;
    const float* r3 = r2 + cols;
    auto a0 = hn::Zero(dd), a1 = hn::Zero(dd), a2 = hn::Zero(dd), a3 = hn::Zero(dd);
    for (std::int64_t c = 0; c < body; c += lanes) {
      const auto xv = hn::LoadU(dd, x + c);
      a0 = hn::MulAdd(hn::PromoteTo(dd, hn::LoadU(df, r0 + c)), xv, a0);
      a1 = hn::MulAdd(hn::PromoteTo(dd, hn::LoadU(df, r1 + c)), xv, a1);
      a2 = hn::MulAdd(hn::PromoteTo(dd, hn::LoadU(df, r2 + c)), xv, a2);
      a3 = hn::MulAdd(hn::PromoteTo(dd, hn::LoadU(df, r3 + c)), xv, a3);
    }
    y[r] = hn::GetLane(hn::SumOfLanes(dd, a0)) + dot_tail(r0, body);
    y[r + 1] = hn::GetLane(hn::SumOfLanes(dd, a1)) + dot_tail(r1, body);
    y[r + 2] = hn::GetLane(hn::SumOfLanes(dd, a2)) + dot_tail(r2, body);
    y[r + 3] = hn::GetLane(hn::SumOfLanes(dd, a3)) + dot_tail(r3, body);
  }
  for (; r < rows; ++r) {
    const float* row = w + r * cols;
    auto a = hn::Zero(dd);
    for (std::int64_t c = 0; c < body; c += lanes)
      a = hn::MulAdd(hn::PromoteTo(dd, hn::LoadU(df, row + c)), hn::LoadU(dd, x + c), a);
    y[r] = hn::GetLane(hn::SumOfLanes(dd, a)) + dot_tail(row, body);
  }
}

// y = sum over rows of x[r] * row r: y stays in cache (cols doubles) while the rows stream past.
void MatVecTransposed(const float* HWY_RESTRICT w, std::int64_t rows, std::int64_t cols,
                      const double* HWY_RESTRICT x, double* HWY_RESTRICT y) {
  const hn::ScalableTag<double> dd;
  const hn::Rebind<float, decltype(dd)> df;
  const std::int64_t lanes = static_cast<std::int64_t>(hn::Lanes(dd));
  const std::int64_t body = cols - cols % lanes;
  for (std::int64_t c = 0; c < cols; ++c) y[c] = 0.0;
  std::int64_t r = 0;
  for (; r + 2 <= rows; r += 2) {  // two rows a pass: half the loads and stores of y
    const float* r0 = w + r * cols;
    const float* r1 = r0 + cols;
    const auto s0 = hn::Set(dd, x[r]);
    const auto s1 = hn::Set(dd, x[r + 1]);
    for (std::int64_t c = 0; c < body; c += lanes) {
      auto acc = hn::LoadU(dd, y + c);
      acc = hn::MulAdd(hn::PromoteTo(dd, hn::LoadU(df, r0 + c)), s0, acc);
      acc = hn::MulAdd(hn::PromoteTo(dd, hn::LoadU(df, r1 + c)), s1, acc);
      hn::StoreU(acc, dd, y + c);
    }
    for (std::int64_t c = body; c < cols; ++c)
      y[c] += static_cast<double>(r0[c]) * x[r] + static_cast<double>(r1[c]) * x[r + 1];
  }
  for (; r < rows; ++r) {
    const float* row = w + r * cols;
    const auto s = hn::Set(dd, x[r]);
    for (std::int64_t c = 0; c < body; c += lanes)
      hn::StoreU(hn::MulAdd(hn::PromoteTo(dd, hn::LoadU(df, row + c)), s, hn::LoadU(dd, y + c)), dd, y + c);
    for (std::int64_t c = body; c < cols; ++c) y[c] += static_cast<double>(row[c]) * x[r];
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace tfdebug::detail
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "tfdebug/core/matvec.hpp"

namespace tfdebug {
namespace detail {
HWY_EXPORT(MatVec);
HWY_EXPORT(MatVecTransposed);
}  // namespace detail

void matvec(const float* w, std::int64_t rows, std::int64_t cols, const double* x, double* y) {
  if (rows <= 0) return;
  HWY_DYNAMIC_DISPATCH(detail::MatVec)(w, rows, cols < 0 ? 0 : cols, x, y);
}

void matvec_transposed(const float* w, std::int64_t rows, std::int64_t cols, const double* x, double* y) {
  if (cols <= 0) return;
  HWY_DYNAMIC_DISPATCH(detail::MatVecTransposed)(w, rows < 0 ? 0 : rows, cols, x, y);
}

}  // namespace tfdebug
#endif  // HWY_ONCE
