#include "tfdebug/core/tensor.hpp"

#include <cstring>

#include "tensor_walk.hpp"

namespace tfdebug {

Tensor::Tensor(DType dtype, std::span<const std::int64_t> shape)
    : dtype_(dtype), shape_(shape.begin(), shape.end()), numel_(checked_numel(shape, "tensor")) {
  if (shape.size() > static_cast<std::size_t>(kMaxRank)) {
    throw Error("tensor rank " + std::to_string(shape.size()) + " exceeds the supported maximum of " +
                std::to_string(kMaxRank));
  }
  std::size_t bytes = 0;
  if (__builtin_mul_overflow(static_cast<std::size_t>(numel_), dtype_size(dtype), &bytes)) {
    throw Error("tensor: size in bytes overflows");
  }
  bytes_.resize(bytes);
}

TensorView Tensor::view() const noexcept {
  // The shape was validated by the constructor, so the view constructor cannot throw.
  return TensorView(bytes_.data(), dtype_, shape_);
}

void Tensor::check_value_type(std::size_t size, bool floating, const char* name) const {
  // f32 and f64 are read as float and double; the narrow floats as their raw bits (uint16_t,
  // uint8_t); the integers and bool as integers of their size.
  const bool wants_floating = is_floating(dtype_) && dtype_size(dtype_) >= 4;
  if (size != dtype_size(dtype_) || floating != wants_floating) {
    throw Error(std::string("tensor of dtype ") + std::string(dtype_name(dtype_)) +
                " cannot be accessed as values of C++ type " + name);
  }
}

Tensor Tensor::copy_of(TensorView view, DType dtype) {
  Tensor out(dtype, view.shape());
  if (dtype == view.dtype()) {
    auto* dst = static_cast<std::byte*>(out.data());
    const std::size_t size = view.element_size();
    detail::walk_runs(view, [&](const std::byte* src, std::int64_t count, std::int64_t stride) {
      for (std::int64_t i = 0; i < count; ++i, dst += size) {
        std::memcpy(dst, src + i * stride * static_cast<std::int64_t>(size), size);
      }
    });
    return out;
  }
  if (dtype != DType::f32 && dtype != DType::f64) {
    throw Error(std::string("Tensor::copy_of converts only to f32 or f64, not to ") +
                std::string(dtype_name(dtype)));
  }
  std::int64_t k = 0;
  const DType src_dtype = view.dtype();
  const auto size = static_cast<std::int64_t>(view.element_size());
  detail::walk_runs(view, [&](const std::byte* src, std::int64_t count, std::int64_t stride) {
    for (std::int64_t i = 0; i < count; ++i, ++k) {
      const double value = load_as_double(src + i * stride * size, src_dtype, 0);
      if (dtype == DType::f64) {
        static_cast<double*>(out.data())[k] = value;
      } else {
        static_cast<float*>(out.data())[k] = static_cast<float>(value);
      }
    }
  });
  return out;
}

Tensor Tensor::from_values(std::span<const float> values, std::span<const std::int64_t> shape) {
  Tensor out(DType::f32, shape);
  if (static_cast<std::size_t>(out.numel()) != values.size()) {
    throw Error("Tensor::from_values: " + std::to_string(values.size()) + " values do not fill a tensor of " +
                std::to_string(out.numel()) + " elements");
  }
  std::memcpy(out.data(), values.data(), values.size_bytes());
  return out;
}

Tensor Tensor::from_values(std::span<const double> values, std::span<const std::int64_t> shape) {
  Tensor out(DType::f64, shape);
  if (static_cast<std::size_t>(out.numel()) != values.size()) {
    throw Error("Tensor::from_values: " + std::to_string(values.size()) + " values do not fill a tensor of " +
                std::to_string(out.numel()) + " elements");
  }
  std::memcpy(out.data(), values.data(), values.size_bytes());
  return out;
}

}  // namespace tfdebug
