// TorchLayerModel (tfdebug/torch/layer_model.hpp): a layer's output captured by an op override.
#include <ATen/core/Tensor.h>
#include <ATen/core/grad_mode.h>
#include <ATen/ops/from_blob.h>
#include <ATen/ops/zeros.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/nn/module.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "batch_tensor.hpp"
#include "op_override.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/torch/layer_model.hpp"

namespace tfdebug::torch {
namespace {

using detail::batch_of;
using detail::shape_text;

// Note [Layer capture]: the override sees every op of the forward pass on this thread, outer ops
// only. An op that reads one of the layer's parameters (a storage in `storages`) and returns one
// floating-point tensor is the layer's; its output is kept (detached, a leaf that requires grad
// when gradients are wanted) and the rest of the forward gets a clone of it: in-place ops after
// the layer (ReLU(inplace=True)) change the clone, not what was captured, and the clone's
// backward leads to the leaf. The last such op wins: a layer's output is its last op's.
class LayerCapture : public detail::OpOverride {
 public:
  LayerCapture(const std::unordered_set<const void*>& storages, bool gradient)
      : storages_(storages), gradient_(gradient) {}

  void call(const c10::OperatorHandle& op, c10::DispatchKeySet keys, ::torch::jit::Stack* stack) override {
    const std::size_t arguments = op.schema().arguments().size();
    const bool in_layer = stack->size() >= arguments && reads_layer(*stack, stack->size() - arguments);
    detail::pass_through(op, keys, stack);
    if (!in_layer || op.schema().returns().size() != 1 || stack->empty() || !stack->back().isTensor()) return;
    const at::Tensor out = stack->back().toTensor();
    if (!out.defined() || !out.is_floating_point()) return;
    captured = out.detach();
    if (gradient_) captured.requires_grad_(true);
    stack->back() = captured.clone();
    ++ops;
  }

  at::Tensor captured;
  std::int64_t ops = 0;

 private:
  bool reads_layer(const ::torch::jit::Stack& stack, std::size_t first) const {
    const auto in_layer = [&](const at::Tensor& t) {
      if (!t.defined()) return false;
      const auto& storage = t.unsafeGetTensorImpl()->unsafe_storage();
      return storage && storages_.count(storage.data()) != 0;
    };
    for (std::size_t i = first; i < stack.size(); ++i) {
      const c10::IValue& value = stack[i];
      if (value.isTensor() && in_layer(value.toTensor())) return true;
      if (value.isTensorList()) {
        const auto list = value.toTensorList();
        for (std::size_t j = 0; j < list.size(); ++j)
          if (in_layer(list.get(j))) return true;
      }
    }
    return false;
  }

  const std::unordered_set<const void*>& storages_;
  bool gradient_;
};

std::string first_line(const std::exception& e) {
  std::string what = e.what();
  if (const auto cut = what.find('\n'); cut != std::string::npos) what.resize(cut);  // c10's backtraces
  return what;
}

std::vector<TorchLayerModel::Parameter> parameters_of(::torch::nn::Module& module) {
  std::vector<TorchLayerModel::Parameter> out;
  for (const auto& named : module.named_parameters(/*recurse=*/true)) {
    const std::string& name = named.key();
    const auto dot = name.rfind('.');
    const auto& storage = named.value().unsafeGetTensorImpl()->unsafe_storage();
    out.push_back(
        {dot == std::string::npos ? std::string() : name.substr(0, dot), storage ? storage.data() : nullptr});
  }
  return out;
}

}  // namespace

TorchLayerModel::TorchLayerModel(Forward forward, ::torch::nn::Module& module, std::string layer,
                                 std::vector<std::int64_t> input_shape)
    : TorchLayerModel(std::move(forward), parameters_of(module), std::move(layer), std::move(input_shape)) {}

TorchLayerModel::TorchLayerModel(Forward forward, const std::vector<Parameter>& parameters, std::string layer,
                                 std::vector<std::int64_t> input_shape)
    : forward_(std::move(forward)), input_shape_(std::move(input_shape)), layer_(std::move(layer)) {
  std::set<std::string> layers;
  for (const Parameter& p : parameters) {
    // The module and every parent of it, but not the root ("").
    for (std::string path = p.module; !path.empty();) {
      layers.insert(path);
      const auto dot = path.rfind('.');
      path = dot == std::string::npos ? std::string() : path.substr(0, dot);
    }
    if (!layer_.empty() && (p.module == layer_ || p.module.starts_with(layer_ + ".")) && p.storage != nullptr)
      storages_.insert(p.storage);
  }
  layers_.assign(layers.begin(), layers.end());
  const auto listing = [&] {
    std::string s;
    for (const std::string& name : layers_) s.append(s.empty() ? "" : ", ").append(name);
    return s.empty() ? std::string("none: the model has no parameters") : s;
  };
  if (layer_.empty()) throw Error("name a layer (layers: " + listing() + ")");
  if (storages_.empty()) {
    throw Error("layer '" + layer_ + "' is not a module of the model with parameters (layers: " + listing() +
                ")");
  }
  // One zero example: the outputs, and the layer's shape (which an op must have produced).
  std::vector<std::int64_t> shape = input_shape_;
  shape.insert(shape.begin(), 1);
  const at::Tensor zeros = at::zeros(shape, at::TensorOptions().dtype(at::kFloat));
  at::NoGradGuard no_grad;
  LayerCapture capture(storages_, false);
  at::Tensor y;
  try {
    const detail::OverrideScope scope(capture);
    y = forward_(zeros);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw Error("the model's forward failed on a batch of shape " + shape_text(shape) + ": " + first_line(e));
  }
  if (y.dim() == 1) y = y.unsqueeze(1);
  if (y.dim() != 2 || y.size(0) != 1) {
    throw Error("the model returned outputs of shape " + shape_text(y.sizes().vec()) +
                " for a batch of 1; expected [1, outputs] or [1]");
  }
  outputs_ = y.size(1);
  if (capture.ops == 0) {
    throw Error("no op of the forward pass read the parameters of layer '" + layer_ +
                "' (layers: " + listing() + ")");
  }
  const std::vector<std::int64_t> sizes = capture.captured.sizes().vec();
  if (sizes.empty() || sizes.front() != 1) {
    throw Error("layer '" + layer_ + "' gave an output of shape " + shape_text(sizes) +
                " for a batch of 1; expected [1, channels, ...]");
  }
  layer_shape_.assign(sizes.begin() + 1, sizes.end());
}

namespace {

// The forward pass of a batch under a capture; the captured output checked against the batch.
at::Tensor run_captured(const TorchLayerModel::Forward& forward, const at::Tensor& batch,
                        LayerCapture& capture, const TorchLayerModel& model) {
  at::Tensor y;
  try {
    const detail::OverrideScope scope(capture);
    y = forward(batch);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw Error("the model's forward failed on a batch of shape " + shape_text(batch.sizes().vec()) + ": " +
                first_line(e));
  }
  const std::int64_t n = batch.size(0);
  std::vector<std::int64_t> expected = model.layer_shape();
  expected.insert(expected.begin(), n);
  if (!capture.captured.defined() || capture.captured.sizes().vec() != expected) {
    throw Error("layer '" + model.layer() + "' gave " +
                (capture.captured.defined()
                     ? "an output of shape " + shape_text(capture.captured.sizes().vec())
                     : std::string("no output")) +
                " for a batch of " + std::to_string(n) + "; expected " + shape_text(expected));
  }
  y = y.to(at::kFloat);
  if (y.dim() == 1) y = y.unsqueeze(1);
  if (y.dim() != 2 || y.size(0) != n || y.size(1) != model.output_size()) {
    throw Error("the model returned outputs of shape " + shape_text(y.sizes().vec()) + " for a batch of " +
                std::to_string(n));
  }
  return y;
}

void copy_out(const at::Tensor& t, std::span<float> to) {
  const at::Tensor c = t.detach().to(at::kFloat).contiguous();
  std::copy_n(c.data_ptr<float>(), c.numel(), to.begin());
}

}  // namespace

void TorchLayerModel::forward(const TensorView& inputs, std::span<float> outputs) {
  at::NoGradGuard no_grad;
  LayerCapture capture(storages_, false);
  copy_out(run_captured(forward_, batch_of(inputs), capture, *this), outputs);
}

void TorchLayerModel::activations(const TensorView& inputs, std::span<float> activations) {
  at::NoGradGuard no_grad;
  LayerCapture capture(storages_, false);
  run_captured(forward_, batch_of(inputs), capture, *this);
  copy_out(capture.captured, activations);
}

void TorchLayerModel::layer_gradient(const TensorView& inputs, std::int64_t target, std::span<float> scores,
                                     std::span<float> activations, std::span<float> gradients) {
  const at::AutoGradMode grad(true);
  LayerCapture capture(storages_, true);
  const at::Tensor y = run_captured(forward_, batch_of(inputs), capture, *this);
  const at::Tensor score = y.select(1, target);
  copy_out(score, scores);
  copy_out(capture.captured, activations);
  // Examples are independent: the gradient of the summed scores is each example's own. A score
  // that does not depend on the layer has no path to it: its gradient is zero.
  const at::Tensor total = score.sum();
  at::Tensor g;
  if (total.requires_grad()) {
    g = ::torch::autograd::grad({total}, {capture.captured}, {}, /*retain_graph=*/false,
                                /*create_graph=*/false,
                                /*allow_unused=*/true)
            .front();
  }
  if (g.defined()) {
    copy_out(g, gradients);
  } else {
    std::fill(gradients.begin(), gradients.end(), 0.0f);
  }
}

}  // namespace tfdebug::torch
