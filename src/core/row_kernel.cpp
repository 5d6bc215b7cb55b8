// Per-row summaries of a matrix (row_summaries in stats.hpp): the row abs-max, whether a row is
// all zero, and which columns hold a non-zero value, in one pass over IEEE bit patterns.
// |x| as an integer orders like |x|, and masking the sign bit leaves a non-negative signed
// integer, so the row abs-max is a signed integer max with non-finite values (exponent all
// ones) masked to 0. Highway dispatches to the best SIMD target, as for the stats kernel.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "row_kernel.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <vector>

HWY_BEFORE_NAMESPACE();
namespace tfdebug::detail {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Rows of `cols` values of unsigned bit patterns T; col_or[c] |= |bits| of column c.
template <typename T>
HWY_INLINE void RowsImpl(const T* HWY_RESTRICT data, std::int64_t rows, std::int64_t cols, T abs_mask,
                         T inf_bits, T* HWY_RESTRICT row_max, std::uint8_t* HWY_RESTRICT row_zero,
                         T* HWY_RESTRICT col_or) {
  const hn::ScalableTag<T> du;
  const hn::RebindToSigned<decltype(du)> di;
  using TI = hn::TFromD<decltype(di)>;
  const std::int64_t n = static_cast<std::int64_t>(hn::Lanes(du));
  const auto mask = hn::Set(du, abs_mask);
  const auto inf = hn::Set(di, static_cast<TI>(inf_bits));
  HWY_ALIGN T lanes[hn::MaxLanes(du)];
  for (std::int64_t r = 0; r < rows; ++r) {
    const T* HWY_RESTRICT row = data + r * cols;
    auto vmax = hn::Zero(di);
    auto vany = hn::Zero(du);
    std::int64_t c = 0;
    for (; c + n <= cols; c += n) {
      const auto a = hn::And(hn::LoadU(du, row + c), mask);
      const auto s = hn::BitCast(di, a);
      vmax = hn::Max(vmax, hn::IfThenElseZero(hn::Lt(s, inf), s));
      vany = hn::Or(vany, a);
      hn::StoreU(hn::Or(hn::LoadU(du, col_or + c), a), du, col_or + c);
    }
    hn::Store(hn::BitCast(du, vmax), du, lanes);
    T largest = 0;
    for (std::int64_t i = 0; i < n; ++i) largest = std::max(largest, lanes[i]);
    hn::Store(vany, du, lanes);
    T any = 0;
    for (std::int64_t i = 0; i < n; ++i) any |= lanes[i];
    for (; c < cols; ++c) {
      T b;
      std::memcpy(&b, row + c, sizeof b);  // views may be misaligned
      const T a = static_cast<T>(b & abs_mask);
      if (a < inf_bits) largest = std::max(largest, a);
      any |= a;
      col_or[c] |= a;
    }
    row_max[r] = largest;
    row_zero[r] = static_cast<std::uint8_t>(any == 0);
  }
}

// Column ORs alone (column_nonzero): col_or[c] |= |bits| of column c over every row. Blocks of
// four vectors of columns are ORed in registers down all the rows, so nothing is reduced per row:
// a [512, 64] f32 output is 32 vectors of 16 lanes per 4 vector ORs, no horizontal step.
template <typename T>
HWY_INLINE void ColumnsImpl(const T* HWY_RESTRICT data, std::int64_t rows, std::int64_t cols, T abs_mask,
                            T* HWY_RESTRICT col_or) {
  const hn::ScalableTag<T> du;
  const std::int64_t n = static_cast<std::int64_t>(hn::Lanes(du));
  const auto mask = hn::Set(du, abs_mask);
  std::int64_t c = 0;
  for (; c + 4 * n <= cols; c += 4 * n) {
    auto a0 = hn::Zero(du), a1 = a0, a2 = a0, a3 = a0;
    for (std::int64_t r = 0; r < rows; ++r) {
      const T* HWY_RESTRICT p = data + r * cols + c;
      a0 = hn::Or(a0, hn::LoadU(du, p));
      a1 = hn::Or(a1, hn::LoadU(du, p + n));
      a2 = hn::Or(a2, hn::LoadU(du, p + 2 * n));
      a3 = hn::Or(a3, hn::LoadU(du, p + 3 * n));
    }
    hn::StoreU(hn::Or(hn::LoadU(du, col_or + c), hn::And(a0, mask)), du, col_or + c);
    hn::StoreU(hn::Or(hn::LoadU(du, col_or + c + n), hn::And(a1, mask)), du, col_or + c + n);
    hn::StoreU(hn::Or(hn::LoadU(du, col_or + c + 2 * n), hn::And(a2, mask)), du, col_or + c + 2 * n);
    hn::StoreU(hn::Or(hn::LoadU(du, col_or + c + 3 * n), hn::And(a3, mask)), du, col_or + c + 3 * n);
  }
  for (; c + n <= cols; c += n) {
    auto a = hn::Zero(du);
    for (std::int64_t r = 0; r < rows; ++r) a = hn::Or(a, hn::LoadU(du, data + r * cols + c));
    hn::StoreU(hn::Or(hn::LoadU(du, col_or + c), hn::And(a, mask)), du, col_or + c);
  }
  for (; c < cols; ++c) {
    T a = 0;
    for (std::int64_t r = 0; r < rows; ++r) {
      T b;
      std::memcpy(&b, data + r * cols + c, sizeof b);  // views may be misaligned
      a = static_cast<T>(a | b);
    }
    col_or[c] = static_cast<T>(col_or[c] | (a & abs_mask));
  }
}

void Columns16(const std::uint16_t* data, std::int64_t rows, std::int64_t cols, std::uint16_t abs_mask,
               std::uint16_t* col_or) {
  ColumnsImpl(data, rows, cols, abs_mask, col_or);
}
void Columns32(const std::uint32_t* data, std::int64_t rows, std::int64_t cols, std::uint32_t abs_mask,
               std::uint32_t* col_or) {
  ColumnsImpl(data, rows, cols, abs_mask, col_or);
}
void Columns64(const std::uint64_t* data, std::int64_t rows, std::int64_t cols, std::uint64_t abs_mask,
               std::uint64_t* col_or) {
  ColumnsImpl(data, rows, cols, abs_mask, col_or);
}

void Rows16(const std::uint16_t* data, std::int64_t rows, std::int64_t cols, std::uint16_t abs_mask,
            std::uint16_t inf_bits, std::uint16_t* row_max, std::uint8_t* row_zero, std::uint16_t* col_or) {
  RowsImpl(data, rows, cols, abs_mask, inf_bits, row_max, row_zero, col_or);
}
void Rows32(const std::uint32_t* data, std::int64_t rows, std::int64_t cols, std::uint32_t abs_mask,
            std::uint32_t inf_bits, std::uint32_t* row_max, std::uint8_t* row_zero, std::uint32_t* col_or) {
  RowsImpl(data, rows, cols, abs_mask, inf_bits, row_max, row_zero, col_or);
}
void Rows64(const std::uint64_t* data, std::int64_t rows, std::int64_t cols, std::uint64_t abs_mask,
            std::uint64_t inf_bits, std::uint64_t* row_max, std::uint8_t* row_zero, std::uint64_t* col_or) {
  RowsImpl(data, rows, cols, abs_mask, inf_bits, row_max, row_zero, col_or);
}

}  // namespace HWY_NAMESPACE
}  // namespace tfdebug::detail
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "tfdebug/core/dtype.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/core/stats.hpp"
#include "tfdebug/core/tensor.hpp"

namespace tfdebug {
namespace detail {
HWY_EXPORT(Rows16);
HWY_EXPORT(Rows32);
HWY_EXPORT(Rows64);
HWY_EXPORT(Columns16);
HWY_EXPORT(Columns32);
HWY_EXPORT(Columns64);
}  // namespace detail

namespace {

template <typename T, typename Run, typename Decode>
void summarise(const TensorView& m, T abs_mask, T inf_bits, Run run, Decode decode, double* row_abs_max,
               std::uint8_t* row_zero, std::uint8_t* column_nonzero) {
  const std::int64_t rows = m.shape(0);
  const std::int64_t cols = m.shape(1);
  std::vector<T> row_max(static_cast<std::size_t>(rows));
  std::vector<T> col_or(static_cast<std::size_t>(cols), 0);
  run(static_cast<const T*>(m.data()), rows, cols, abs_mask, inf_bits, row_max.data(), row_zero,
      col_or.data());
  for (std::int64_t r = 0; r < rows; ++r) row_abs_max[r] = decode(row_max[static_cast<std::size_t>(r)]);
  for (std::int64_t c = 0; c < cols; ++c)
    column_nonzero[c] |= static_cast<std::uint8_t>(col_or[static_cast<std::size_t>(c)] != 0);
}

double from_f32_bits(std::uint32_t b) {
  return static_cast<double>(std::bit_cast<float>(b));
}

}  // namespace

void row_summaries(TensorView matrix, double* row_abs_max, std::uint8_t* row_zero,
                   std::uint8_t* column_nonzero) {
  if (matrix.rank() != 2 || !is_floating(matrix.dtype())) {
    throw Error("row_summaries needs a floating-point matrix, not " + matrix.describe());
  }
  if (matrix.numel() == 0) {
    std::fill(row_abs_max, row_abs_max + matrix.shape(0), 0.0);
    std::fill(row_zero, row_zero + matrix.shape(0), std::uint8_t{1});
    return;
  }
  if (matrix.is_contiguous()) {
    switch (matrix.dtype()) {
      case DType::f32:
        return summarise<std::uint32_t>(matrix, 0x7FFFFFFFu, 0x7F800000u,
                                        HWY_DYNAMIC_DISPATCH(detail::Rows32), from_f32_bits, row_abs_max,
                                        row_zero, column_nonzero);
      case DType::f64:
        return summarise<std::uint64_t>(
            matrix, 0x7FFFFFFFFFFFFFFFull, 0x7FF0000000000000ull, HWY_DYNAMIC_DISPATCH(detail::Rows64),
            [](std::uint64_t b) { return std::bit_cast<double>(b); }, row_abs_max, row_zero, column_nonzero);
      case DType::f16:
        return summarise<std::uint16_t>(
            matrix, 0x7FFF, 0x7C00, HWY_DYNAMIC_DISPATCH(detail::Rows16),
            [](std::uint16_t b) { return static_cast<double>(f16_to_f32(b)); }, row_abs_max, row_zero,
            column_nonzero);
      case DType::bf16:
        return summarise<std::uint16_t>(
            matrix, 0x7FFF, 0x7F80, HWY_DYNAMIC_DISPATCH(detail::Rows16),
            [](std::uint16_t b) { return static_cast<double>(bf16_to_f32(b)); }, row_abs_max, row_zero,
            column_nonzero);
      default:
        break;
    }
  }
  // Strided matrices and fp8: an f32 copy (fp8 converts exactly).
  const Tensor copy = Tensor::copy_of(matrix, DType::f32);
  summarise<std::uint32_t>(copy.view(), 0x7FFFFFFFu, 0x7F800000u, HWY_DYNAMIC_DISPATCH(detail::Rows32),
                           from_f32_bits, row_abs_max, row_zero, column_nonzero);
}

namespace {

template <typename T, typename Run>
void or_columns(const TensorView& m, T abs_mask, Run run, std::uint8_t* column_nonzero) {
  const std::int64_t cols = m.shape(1);
  std::vector<T> col_or(static_cast<std::size_t>(cols), 0);
  run(static_cast<const T*>(m.data()), m.shape(0), cols, abs_mask, col_or.data());
  for (std::int64_t c = 0; c < cols; ++c)
    column_nonzero[c] |= static_cast<std::uint8_t>(col_or[static_cast<std::size_t>(c)] != 0);
}

}  // namespace

void column_nonzero(TensorView matrix, std::uint8_t* column_nonzero) {
  if (matrix.rank() != 2 || !is_floating(matrix.dtype())) {
    throw Error("column_nonzero needs a floating-point matrix, not " + matrix.describe());
  }
  if (matrix.numel() == 0) return;
  if (matrix.is_contiguous()) {
    switch (matrix.dtype()) {
      case DType::f32:
        return or_columns<std::uint32_t>(matrix, 0x7FFFFFFFu, HWY_DYNAMIC_DISPATCH(detail::Columns32),
                                         column_nonzero);
      case DType::f64:
        return or_columns<std::uint64_t>(matrix, 0x7FFFFFFFFFFFFFFFull,
                                         HWY_DYNAMIC_DISPATCH(detail::Columns64), column_nonzero);
      case DType::f16:
      case DType::bf16:
        return or_columns<std::uint16_t>(matrix, 0x7FFF, HWY_DYNAMIC_DISPATCH(detail::Columns16),
                                         column_nonzero);
      default:
        break;
    }
  }
  // Strided matrices and fp8: an f32 copy (fp8 converts exactly, zeros stay zeros).
  const Tensor copy = Tensor::copy_of(matrix, DType::f32);
  or_columns<std::uint32_t>(copy.view(), 0x7FFFFFFFu, HWY_DYNAMIC_DISPATCH(detail::Columns32),
                            column_nonzero);
}

}  // namespace tfdebug
#endif  // HWY_ONCE
