// What the LibTorch interpretability models (interpret_model.cpp, torch_layer_model.cpp,
// rule_model.cpp) share: a batch of interpret's TensorViews as a tensor, shapes in messages, the
// first line of a c10 error. Private to tfdebug::torch.
#pragma once

#include <ATen/core/Tensor.h>
#include <ATen/ops/from_blob.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tfdebug/core/error.hpp"
#include "tfdebug/core/tensor_view.hpp"

namespace tfdebug::torch::detail {

// "[2, 3]".
inline std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s.append(i ? ", " : "").append(std::to_string(shape[i]));
  return s + "]";
}

// The batch as a float tensor over the caller's memory (not copied: the models only read it, or
// clone it first).
inline at::Tensor batch_of(const TensorView& inputs) {
  if (inputs.dtype() != DType::f32) throw Error("interpretability batches are f32");
  std::vector<std::int64_t> shape(inputs.shape().begin(), inputs.shape().end());
  return at::from_blob(const_cast<void*>(inputs.data()), shape, at::TensorOptions().dtype(at::kFloat));
}

}  // namespace tfdebug::torch::detail
