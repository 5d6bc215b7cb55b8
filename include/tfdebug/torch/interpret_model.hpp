// LibTorch models as interpretability tiers (tfdebug/interpret/model.hpp): any function from a
// batch to its outputs, a torch::nn::Module's forward, or a TorchScript file, served as a
// LossGradientModel ([F], [G] and [G+]) to every attribution, Shapley method and attack.
//
//   auto model = tfdebug::torch::load_torchscript("mlp.pt", {4});  // one example: 4 features
//   const auto a = tfdebug::interpret::integrated_gradients(model, x, /*target=*/2);
//
//   Net net;  // any module; put it in eval mode first (dropout, batch norm)
//   tfdebug::torch::TorchModel m([&](const at::Tensor& batch) { return net->forward(batch); }, {1, 8, 8});
//
// The function takes a float32 batch [n, input_shape...] and returns [n, outputs] (or [n] for
// one output); it must treat examples independently. Forward runs under no-grad; gradient runs
// one backward pass per model call (the target's scores summed over the batch), so a call of
// max_batch examples costs one forward and one backward; so does loss_gradient (the attacks'
// cross-entropy or margin, whatever the number of classes).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tfdebug/interpret/loss_gradient_model.hpp"

namespace at {
class Tensor;
}

namespace tfdebug::torch {

// A parameter by its module path ("encoder.layers.0.self_attn" for its in_proj_weight) and the
// address of its storage's data: how a model that is not a torch::nn::Module (a TorchScript file's
// torch::jit::Module) tells which module an op runs in, by the parameters it reads.
struct ModuleParameter {
  std::string module;
  const void* storage = nullptr;
};

class TorchModel : public interpret::LossGradientModel {
 public:
  using Forward = std::function<at::Tensor(const at::Tensor& batch)>;
  // Runs `forward` once on a zero example to learn the number of outputs; tfdebug::Error when
  // it throws (its message included) or returns something that is not [1, k] or [1].
  TorchModel(Forward forward, std::vector<std::int64_t> input_shape);
  ~TorchModel() override;
  TorchModel(TorchModel&&) noexcept;
  TorchModel& operator=(TorchModel&&) noexcept;

  std::vector<std::int64_t> input_shape() const override { return input_shape_; }
  std::int64_t output_size() const override { return outputs_; }
  void forward(const TensorView& inputs, std::span<float> outputs) override;
  void gradient(const TensorView& inputs, std::int64_t target, std::span<float> scores,
                std::span<float> gradients) override;
  void loss_gradient(const TensorView& inputs, const OutputWeights& weigh, std::span<float> outputs,
                     std::span<float> gradients) override;

 private:
  Forward forward_;
  std::vector<std::int64_t> input_shape_;
  std::int64_t outputs_ = 0;
};

// A TorchScript file (torch.jit.save / torch.jit.script(model).save in Python), loaded with
// torch::jit::load on the CPU, in eval mode; its forward(x) is the model. tfdebug::Error naming
// the file when it cannot be loaded or its forward does not take a [n, input_shape...] batch.
TorchModel load_torchscript(const std::string& path, std::vector<std::int64_t> input_shape);

}  // namespace tfdebug::torch
