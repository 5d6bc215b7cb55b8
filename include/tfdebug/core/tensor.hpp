// Tensor: an OWNING, contiguous, row-major tensor, for results of analyses and for copies of
// views. Any dtype can be stored; copy_of() converts to f32 or f64.
//
//   tfdebug::Tensor t = tfdebug::Tensor::copy_of(view.transposed(0, 1), tfdebug::DType::f64);
//   std::span<double> values = t.values<double>();
//   tfdebug::compute_stats(t.view());
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <type_traits>
#include <typeinfo>
#include <vector>

#include "tfdebug/core/error.hpp"
#include "tfdebug/core/tensor_view.hpp"

namespace tfdebug {

class Tensor {
 public:
  Tensor() = default;
  // Zero-filled.
  Tensor(DType dtype, std::span<const std::int64_t> shape);
  Tensor(DType dtype, std::initializer_list<std::int64_t> shape)
      : Tensor(dtype, std::span<const std::int64_t>(shape.begin(), shape.size())) {}

  // A contiguous copy of `view`'s elements in row-major order. With `dtype` equal to the view's
  // dtype the bytes are copied; otherwise `dtype` must be f32 or f64 and each element is
  // converted (exact for every source dtype except i64 beyond 2^53 and f64 -> f32 rounding).
  static Tensor copy_of(TensorView view, DType dtype);
  static Tensor copy_of(TensorView view) { return copy_of(view, view.dtype()); }
  // A 1-D or N-D tensor holding `values`.
  static Tensor from_values(std::span<const float> values, std::span<const std::int64_t> shape);
  static Tensor from_values(std::span<const double> values, std::span<const std::int64_t> shape);

  TensorView view() const noexcept;
  DType dtype() const noexcept { return dtype_; }
  std::span<const std::int64_t> shape() const noexcept { return shape_; }
  std::int64_t numel() const noexcept { return numel_; }
  void* data() noexcept { return bytes_.data(); }
  const void* data() const noexcept { return bytes_.data(); }

  // Typed access; T must match the dtype (float for f32, double for f64, std::int64_t for i64,
  // ...). Throws tfdebug::Error on a mismatch.
  template <class T>
  std::span<T> values();
  template <class T>
  std::span<const T> values() const;

  double at(std::initializer_list<std::int64_t> index) const { return view().at(index); }

 private:
  void check_value_type(std::size_t size, bool floating, const char* name) const;

  DType dtype_ = DType::f32;
  std::vector<std::int64_t> shape_;
  std::int64_t numel_ = 0;
  std::vector<std::byte> bytes_;
};

template <class T>
std::span<T> Tensor::values() {
  check_value_type(sizeof(T), std::is_floating_point_v<T>, typeid(T).name());
  return {reinterpret_cast<T*>(bytes_.data()), static_cast<std::size_t>(numel_)};
}

template <class T>
std::span<const T> Tensor::values() const {
  check_value_type(sizeof(T), std::is_floating_point_v<T>, typeid(T).name());
  return {reinterpret_cast<const T*>(bytes_.data()), static_cast<std::size_t>(numel_)};
}

}  // namespace tfdebug
