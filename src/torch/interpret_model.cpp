#include "tfdebug/torch/interpret_model.hpp"

#include <ATen/core/Tensor.h>
#include <ATen/core/grad_mode.h>
#include <ATen/ops/from_blob.h>
#include <ATen/ops/zeros.h>

#include <algorithm>
#include <string>
#include <vector>

#include "batch_tensor.hpp"
#include "tfdebug/core/error.hpp"

namespace tfdebug::torch {
namespace {

using detail::batch_of;
using detail::shape_text;

// outputs of a batch of n as [n, k] float, contiguous.
at::Tensor as_rows(const at::Tensor& out, std::int64_t n) {
  at::Tensor y = out.to(at::kFloat);
  if (y.dim() == 1) y = y.unsqueeze(1);
  if (y.dim() != 2 || y.size(0) != n) {
    throw Error("the model returned outputs of shape " + shape_text(y.sizes().vec()) + " for a batch of " +
                std::to_string(n) + "; expected [" + std::to_string(n) + ", outputs] or [" +
                std::to_string(n) + "]");
  }
  return y.contiguous();
}

at::Tensor run(const TorchModel::Forward& forward, const at::Tensor& batch) {
  try {
    return forward(batch);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    std::string what = e.what();
    if (const auto cut = what.find('\n'); cut != std::string::npos) what.resize(cut);  // c10's backtraces
    throw Error("the model's forward failed on a batch of shape " + shape_text(batch.sizes().vec()) + ": " +
                what);
  }
}

}  // namespace

TorchModel::TorchModel(Forward forward, std::vector<std::int64_t> input_shape)
    : forward_(std::move(forward)), input_shape_(std::move(input_shape)) {
  std::vector<std::int64_t> shape = input_shape_;
  shape.insert(shape.begin(), 1);
  std::int64_t numel = 1;
  for (const std::int64_t d : input_shape_) numel *= d;
  std::vector<float> zeros(static_cast<std::size_t>(numel), 0.0f);
  at::NoGradGuard no_grad;
  const at::Tensor y = as_rows(run(forward_, batch_of(TensorView(zeros.data(), DType::f32, shape))), 1);
  outputs_ = y.size(1);
}

TorchModel::~TorchModel() = default;
TorchModel::TorchModel(TorchModel&&) noexcept = default;
TorchModel& TorchModel::operator=(TorchModel&&) noexcept = default;

void TorchModel::forward(const TensorView& inputs, std::span<float> outputs) {
  at::NoGradGuard no_grad;
  const std::int64_t n = inputs.shape(0);
  const at::Tensor y = as_rows(run(forward_, batch_of(inputs)), n);
  std::copy_n(y.data_ptr<float>(), n * outputs_, outputs.begin());
}

void TorchModel::gradient(const TensorView& inputs, std::int64_t target, std::span<float> scores,
                          std::span<float> gradients) {
  const std::int64_t n = inputs.shape(0);
  const at::Tensor x = batch_of(inputs).clone().set_requires_grad(true);
  const at::Tensor y = as_rows(run(forward_, x), n);
  const at::Tensor score = y.select(1, target);
  // Examples are independent: the gradient of the sum is each example's own gradient. An output
  // that does not depend on the input has no graph: its gradient is zero.
  const at::Tensor total = score.sum();
  if (total.requires_grad()) total.backward();
  const at::Tensor s = score.detach().contiguous();
  std::copy_n(s.data_ptr<float>(), n, scores.begin());
  if (x.grad().defined()) {
    const at::Tensor g = x.grad().contiguous();
    std::copy_n(g.data_ptr<float>(), g.numel(), gradients.begin());
  } else {
    std::fill(gradients.begin(), gradients.end(), 0.0f);
  }
}

void TorchModel::loss_gradient(const TensorView& inputs, const OutputWeights& weigh, std::span<float> outputs,
                               std::span<float> gradients) {
  const std::int64_t n = inputs.shape(0);
  const at::Tensor x = batch_of(inputs).clone().set_requires_grad(true);
  const at::Tensor y = as_rows(run(forward_, x), n);
  const at::Tensor values = y.detach().contiguous();
  std::copy_n(values.data_ptr<float>(), n * outputs_, outputs.begin());
  // The loss's weights depend on the outputs, so they are asked for between the two passes: one
  // forward and one backward, y.backward(weights) being the vector-Jacobian product.
  at::Tensor weights = at::zeros({n, outputs_}, at::TensorOptions().dtype(at::kFloat));
  weigh(std::span<const float>(values.data_ptr<float>(), static_cast<std::size_t>(n * outputs_)),
        std::span<float>(weights.data_ptr<float>(), static_cast<std::size_t>(n * outputs_)));
  if (y.requires_grad()) y.backward(weights);
  if (x.grad().defined()) {
    const at::Tensor g = x.grad().contiguous();
    std::copy_n(g.data_ptr<float>(), g.numel(), gradients.begin());
  } else {
    std::fill(gradients.begin(), gradients.end(), 0.0f);
  }
}

}  // namespace tfdebug::torch
