// LibTorch models as tier [L] (tfdebug/interpret/layer_model.hpp): a torch::nn::Module's forward,
// or a TorchScript file, with one layer named by its module path ("conv2", "features.3"), for
// Grad-CAM, Grad-CAM++ and Score-CAM (tfdebug/interpret/cam.hpp).
//
//   auto model = tfdebug::torch::load_torchscript_layer("cnn.pt", {1, 8, 8}, "conv2");
//   const auto cam = tfdebug::interpret::grad_cam(model, x, /*target=*/3);
//
//   Net net;  // any module, in eval mode
//   tfdebug::torch::TorchLayerModel m([&](const at::Tensor& b) { return net->forward(b); }, *net,
//                                     "conv2", {1, 8, 8});
//
// The layer's output is the output of the last op of the forward pass that reads one of the
// layer's parameters (its own or its submodules'; views of them count): for a Conv2d the
// convolution with its bias, not a ReLU applied after it. It is seen through an op override
// (Note [Op overrides]) on the calling thread, so a layer without parameters (a ReLU module)
// cannot be named: name the layer whose output it takes. Each call captures the layer's output
// and hands the rest of the forward an equal tensor: in layer_gradient a copy of a leaf that
// requires grad, so the gradient is torch::autograd::grad of the target's scores (summed over
// the batch: examples are independent) with respect to it, whether or not the input or the
// weights require grad. TorchScript runs with the graph executor's optimisations off for these
// calls (a fused differentiable graph would hide the layer's output from autograd).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_set>
#include <vector>

#include "tfdebug/interpret/layer_model.hpp"
#include "tfdebug/torch/interpret_model.hpp"

namespace torch::nn {
class Module;
}  // namespace torch::nn

namespace tfdebug::torch {

class TorchLayerModel : public interpret::LayerModel {
 public:
  using Forward = TorchModel::Forward;
  // A module's named parameters say which ops belong to `layer`. Runs `forward` once on a zero
  // example to learn the outputs and the layer's shape. tfdebug::Error naming the layer and
  // listing the layers with parameters when none of it is `layer`, or when no op of the forward
  // pass read its parameters; as TorchModel for a forward that fails or returns the wrong shape.
  TorchLayerModel(Forward forward, ::torch::nn::Module& module, std::string layer,
                  std::vector<std::int64_t> input_shape);

  // A parameter by its module path and the address of its storage's data.
  using Parameter = ModuleParameter;
  // The same from a list of parameters (what load_torchscript_layer passes for a
  // torch::jit::Module); they must outlive the model.
  TorchLayerModel(Forward forward, const std::vector<Parameter>& parameters, std::string layer,
                  std::vector<std::int64_t> input_shape);

  std::vector<std::int64_t> input_shape() const override { return input_shape_; }
  std::int64_t output_size() const override { return outputs_; }
  void forward(const TensorView& inputs, std::span<float> outputs) override;
  std::string layer() const override { return layer_; }
  std::vector<std::int64_t> layer_shape() const override { return layer_shape_; }
  void activations(const TensorView& inputs, std::span<float> activations) override;
  void layer_gradient(const TensorView& inputs, std::int64_t target, std::span<float> scores,
                      std::span<float> activations, std::span<float> gradients) override;

  // The module paths that hold parameters, and their parents: the names `layer` may take.
  const std::vector<std::string>& layers() const { return layers_; }

 private:
  Forward forward_;
  std::vector<std::int64_t> input_shape_;
  std::string layer_;
  std::unordered_set<const void*> storages_;  // the layer's parameters' storages
  std::vector<std::string> layers_;
  std::int64_t outputs_ = 0;
  std::vector<std::int64_t> layer_shape_;
};

// A TorchScript file (see load_torchscript) served as [L] for `layer`, a path among its
// named_modules that holds parameters. tfdebug::Error naming the file, as above.
TorchLayerModel load_torchscript_layer(const std::string& path, std::vector<std::int64_t> input_shape,
                                       const std::string& layer);

}  // namespace tfdebug::torch
