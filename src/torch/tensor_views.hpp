// LibTorch tensors as tfdebug TensorViews: dense CPU floating-point tensors only.
#pragma once

#include <ATen/core/Tensor.h>

#include <optional>

#include "tfdebug/core/dtype.hpp"
#include "tfdebug/core/tensor_view.hpp"

namespace tfdebug::torch::detail {

inline std::optional<DType> dtype_of(at::ScalarType type) {
  switch (type) {
    case at::kFloat:
      return DType::f32;
    case at::kDouble:
      return DType::f64;
    case at::kHalf:
      return DType::f16;
    case at::kBFloat16:
      return DType::bf16;
    default:
      return std::nullopt;
  }
}

// A view of a dense CPU floating-point tensor with at least one element; nullopt otherwise.
inline std::optional<TensorView> view_of(const at::Tensor& t) {
  if (!t.defined() || t.layout() != at::kStrided || !t.is_cpu() || !t.has_storage()) return std::nullopt;
  auto dtype = dtype_of(t.scalar_type());
  if (!dtype) return std::nullopt;
  const auto sizes = t.sizes();
  if (sizes.size() > std::size_t(kMaxRank) || t.numel() == 0) return std::nullopt;
  const auto strides = t.strides();
  return TensorView(t.data_ptr(), *dtype, std::span<const std::int64_t>(sizes.data(), sizes.size()),
                    std::span<const std::int64_t>(strides.data(), strides.size()));
}

}  // namespace tfdebug::torch::detail
