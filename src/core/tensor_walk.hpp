// Private: enumerating a view's elements in row-major (logical) order.
//
// Note [Logical order]: every statistic is defined over the elements in row-major order of
// the view's shape, whatever the strides. Strided, reversed and broadcast views are gathered
// into that order, so they give bit-for-bit the answers of a contiguous copy.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "tfdebug/core/tensor_view.hpp"

namespace tfdebug::detail {

// Calls fn(start, count, stride) for each run along the innermost dimension, in row-major
// order; `stride` is in elements. A rank-0 view is one run of one element.
template <class Fn>
void walk_runs(const TensorView& view, Fn&& fn) {
  const std::int64_t n = view.numel();
  if (n == 0) return;
  const auto* base = static_cast<const std::byte*>(view.data());
  const int rank = view.rank();
  if (rank == 0) {
    fn(base, std::int64_t{1}, std::int64_t{1});
    return;
  }
  const auto size = static_cast<std::int64_t>(view.element_size());
  const std::int64_t inner = view.shape(rank - 1);
  const std::int64_t inner_stride = view.stride(rank - 1);
  std::int64_t index[kMaxRank] = {};
  for (std::int64_t done = 0; done < n; done += inner) {
    std::int64_t offset = 0;
    for (int d = 0; d < rank - 1; ++d) offset += index[d] * view.stride(d);
    fn(base + offset * size, inner, inner_stride);
    for (int d = rank - 2; d >= 0; --d) {
      if (++index[d] < view.shape(d)) break;
      index[d] = 0;
    }
  }
}

// Copies `count` elements starting at logical (row-major) position `start` into `dst`,
// packed, in the view's own dtype.
inline void gather_range(const TensorView& view, std::int64_t start, std::int64_t count, std::byte* dst) {
  const int rank = view.rank();
  const auto size = static_cast<std::int64_t>(view.element_size());
  const auto* base = static_cast<const std::byte*>(view.data());
  if (rank == 0) {
    if (count > 0) std::memcpy(dst, base, static_cast<std::size_t>(size));
    return;
  }
  std::int64_t index[kMaxRank] = {};
  std::int64_t rest = start;
  for (int d = rank - 1; d >= 0; --d) {
    index[d] = rest % view.shape(d);
    rest /= view.shape(d);
  }
  const std::int64_t inner = view.shape(rank - 1);
  const std::int64_t inner_stride = view.stride(rank - 1);
  while (count > 0) {
    std::int64_t offset = 0;
    for (int d = 0; d < rank; ++d) offset += index[d] * view.stride(d);
    const std::int64_t run = std::min(count, inner - index[rank - 1]);
    const std::byte* src = base + offset * size;
    if (inner_stride == 1) {
      std::memcpy(dst, src, static_cast<std::size_t>(run * size));
      dst += run * size;
    } else {
      for (std::int64_t i = 0; i < run; ++i, dst += size) {
        std::memcpy(dst, src + i * inner_stride * size, static_cast<std::size_t>(size));
      }
    }
    count -= run;
    index[rank - 1] += run;
    for (int d = rank - 1; d > 0 && index[d] == view.shape(d); --d) {
      index[d] = 0;
      ++index[d - 1];
    }
  }
}

}  // namespace tfdebug::detail

namespace tfdebug::detail {

// Calls fn(std::span<const double>) with the view's values, decoded to double, in logical
// order and in blocks of at most kValueBlock.
inline constexpr std::int64_t kValueBlock = 4096;

template <class Fn>
void visit_values(const TensorView& view, Fn&& fn) {
  const std::int64_t n = view.numel();
  const auto size = static_cast<std::int64_t>(view.element_size());
  std::vector<std::byte> raw(static_cast<std::size_t>(kValueBlock * size));
  std::vector<double> values(static_cast<std::size_t>(kValueBlock));
  const bool contiguous = view.is_contiguous();
  for (std::int64_t start = 0; start < n; start += kValueBlock) {
    const std::int64_t count = std::min(kValueBlock, n - start);
    const std::byte* src = static_cast<const std::byte*>(view.data()) + start * size;
    if (!contiguous) {
      gather_range(view, start, count, raw.data());
      src = raw.data();
    }
    for (std::int64_t i = 0; i < count; ++i) {
      values[static_cast<std::size_t>(i)] = load_as_double(src, view.dtype(), i);
    }
    fn(std::span<const double>(values.data(), static_cast<std::size_t>(count)));
  }
}

}  // namespace tfdebug::detail
