// TensorView: a small, trivially copyable, NON-OWNING view of tensor memory (pointer, dtype,
// shape, strides). Pass it by value. It must not outlive the memory it points to.
//
//   std::vector<float> w(4 * 3);
//   tfdebug::TensorView v(w.data(), tfdebug::DType::f32, {4, 3});   // contiguous, row-major
//   v.numel();                          // 12
//   tfdebug::TensorView t = v.transposed(0, 1);                     // shape {3, 4}, strides {1, 3}
//   tfdebug::compute_stats(t);          // same answers as for a contiguous copy of t
//
// Strides are in elements, may be negative (a reversed view) or zero (a broadcast), and the data
// pointer addresses element [0, 0, ...]. The pointer need not be aligned to the element size:
// views straight into a memory-mapped file are fine. Rank is at most kMaxRank.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>

#include "tfdebug/core/dtype.hpp"

namespace tfdebug {

inline constexpr int kMaxRank = 8;

class TensorView {
 public:
  TensorView() = default;
  // A contiguous row-major view.
  TensorView(const void* data, DType dtype, std::span<const std::int64_t> shape);
  TensorView(const void* data, DType dtype, std::initializer_list<std::int64_t> shape)
      : TensorView(data, dtype, std::span<const std::int64_t>(shape.begin(), shape.size())) {}
  // A strided view; `strides` are in elements.
  TensorView(const void* data, DType dtype, std::span<const std::int64_t> shape,
             std::span<const std::int64_t> strides);

  const void* data() const noexcept { return data_; }
  DType dtype() const noexcept { return dtype_; }
  int rank() const noexcept { return rank_; }
  std::span<const std::int64_t> shape() const noexcept { return {shape_.data(), std::size_t(rank_)}; }
  std::span<const std::int64_t> strides() const noexcept { return {strides_.data(), std::size_t(rank_)}; }
  std::int64_t shape(int dim) const noexcept { return shape_[std::size_t(dim)]; }
  std::int64_t stride(int dim) const noexcept { return strides_[std::size_t(dim)]; }
  std::int64_t numel() const noexcept;
  std::size_t element_size() const noexcept { return dtype_size(dtype_); }

  // True when the elements are laid out row-major with no gaps (strides of a fresh tensor).
  bool is_contiguous() const noexcept;
  // Address of the element at `index` (one entry per dimension). Bounds are checked.
  const void* element_ptr(std::span<const std::int64_t> index) const;
  // The element at `index`, read as a double (see load_as_double).
  double at(std::span<const std::int64_t> index) const;
  double at(std::initializer_list<std::int64_t> index) const {
    return at(std::span<const std::int64_t>(index.begin(), index.size()));
  }

  // Views of the same memory. Each checks its arguments and throws tfdebug::Error.
  TensorView transposed(int dim0, int dim1) const;
  TensorView sliced(int dim, std::int64_t start, std::int64_t stop, std::int64_t step = 1) const;
  TensorView flipped(int dim) const;                       // negative stride
  TensorView broadcast(int dim, std::int64_t size) const;  // dimension of size 1 -> zero stride

  // "f32[4, 3]" or "f32[3, 4] strides [1, 3]".
  std::string describe() const;

 private:
  const std::byte* data_ = nullptr;
  DType dtype_ = DType::f32;
  int rank_ = 0;
  std::array<std::int64_t, kMaxRank> shape_{};
  std::array<std::int64_t, kMaxRank> strides_{};
};

// Note [Broadcast views]: a view with a zero stride repeats its elements (torch's expand(), a
// checkpoint that saved an expanded tensor, or a hostile file claiming 2^40 elements over 4
// bytes). distinct_elements() drops the repetition: every dimension of stride 0 becomes size 1,
// and `repeats` is how many times each remaining element occurs in `view` (the product of the
// dropped sizes; 1 when nothing is repeated). Statistics over the result, with counts scaled by
// `repeats` (repeated(Stats) in stats.hpp), are those of the whole view at the cost of its
// stored elements. An empty view is returned unchanged.
TensorView distinct_elements(const TensorView& view, std::int64_t& repeats);

// Row-major strides (in elements) for `shape`.
std::array<std::int64_t, kMaxRank> contiguous_strides(std::span<const std::int64_t> shape);

// Product of `shape`, throwing tfdebug::Error (naming `what`) on a negative dimension or
// when the product overflows int64.
std::int64_t checked_numel(std::span<const std::int64_t> shape, std::string_view what);

}  // namespace tfdebug
