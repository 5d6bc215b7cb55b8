// Attention of a LibTorch model, as the [A] interpretability tier (tfdebug/interpret/
// attention_model.hpp): the attention probabilities every attention module computes, captured
// from the softmax inside it during a forward pass, and the same forward with heads masked.
//
//   Net net;  // eval mode; its attention computes softmax(q k^T / sqrt(d) + mask, -1)
//   TorchAttentionModel model(*net, [&](const at::Tensor& b) { return net->forward(b); }, {16});
//   const auto maps = model.attention(x);       // [layers][heads][16][16], layers in run order
//   const auto a = tfdebug::interpret::rollout_attribution(model, x);
//
// Note [Attention from softmax]
// Under an OverrideScope (Note [Op overrides]) every op of the forward is seen; a softmax over
// the last dimension whose result is [batch, heads, n, n] (an explicit attention, as the demo's)
// or [batch * heads, n, n] (torch::nn::MultiheadAttention in 1.13's C++ API: F::softmax of
// the scores before dropout and bmm) is a layer's attention. Its layer is the module the op runs
// in (Note [Module of an op], rule 4: the parent of the module whose parameters were read last,
// blocks.0.attn after blocks.0.attn.k; MultiheadAttention itself, which reads in_proj_weight).
// Masking multiplies that softmax's result per head before the model uses it. Fused kernels
// (scaled_dot_product_attention, Python's fast path) compute no softmax of their own and are not
// seen: the model must run its explicit-softmax path.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "tfdebug/interpret/attention_model.hpp"
#include "tfdebug/torch/interpret_model.hpp"

namespace at {
class Tensor;
}
namespace torch::nn {
class Module;
}

namespace tfdebug::torch {

// Runs `forward` (a forward pass of `root`, on this thread) and returns the attention of example
// `example` of its batch of `batch`. tfdebug::Error when no attention softmax runs, or layers
// differ in heads or tokens.
interpret::AttentionMaps capture_attention(::torch::nn::Module& root, const std::function<void()>& forward,
                                           std::int64_t batch = 1, std::int64_t example = 0);

// Runs `forward` with the attention of head h of the l-th attention softmax multiplied by
// head_scale[l * heads + h], heads being each softmax's own; tfdebug::Error when the scales do not
// cover every layer's heads.
void run_with_head_scale(::torch::nn::Module& root, const std::function<void()>& forward,
                         std::span<const float> head_scale, std::int64_t batch = 1);

// The same for a model known by its parameters' module paths (a TorchScript module's): each
// softmax's layer is the module of the parameters read last before it.
interpret::AttentionMaps capture_attention(std::span<const ModuleParameter> parameters,
                                           const std::function<void()>& forward, std::int64_t batch = 1,
                                           std::int64_t example = 0);
void run_with_head_scale(std::span<const ModuleParameter> parameters, const std::function<void()>& forward,
                         std::span<const float> head_scale, std::int64_t batch = 1);

// A module as an AttentionModel: `forward` takes a float batch [n, input_shape...] (convert token
// ids inside) and returns [n, outputs], as TorchModel's. `root` must outlive this.
class TorchAttentionModel : public interpret::AttentionModel {
 public:
  TorchAttentionModel(::torch::nn::Module& root, TorchModel::Forward forward,
                      std::vector<std::int64_t> input_shape);
  // A model known by its parameters (load_torchscript_attention); their storage must outlive this.
  TorchAttentionModel(std::vector<ModuleParameter> parameters, TorchModel::Forward forward,
                      std::vector<std::int64_t> input_shape);

  std::vector<std::int64_t> input_shape() const override { return model_.input_shape(); }
  std::int64_t output_size() const override { return model_.output_size(); }
  void forward(const TensorView& inputs, std::span<float> outputs) override {
    model_.forward(inputs, outputs);
  }
  interpret::AttentionMaps attention(std::span<const float> x) override;
  void forward_with_heads(std::span<const float> x, std::span<const float> head_scale,
                          std::span<float> outputs) override;

 private:
  ::torch::nn::Module* root_ = nullptr;
  std::vector<ModuleParameter> parameters_;  // when there is no root
  TorchModel::Forward function_;
  TorchModel model_;
};

// A TorchScript file (torch.jit.script(model).save(path)) as an AttentionModel: `forward(x)` with x
// a float batch [n, input_shape...] (token ids as floats: the model converts them, x.long())
// returning [n, outputs]. Its forward runs with gradients recorded, so that PyTorch's fused
// inference path (nn.TransformerEncoderLayer without grad) does not hide the softmax. tfdebug::Error
// naming the file when it cannot be loaded or its forward fails on a zero example.
TorchAttentionModel load_torchscript_attention(const std::string& path,
                                               std::vector<std::int64_t> input_shape);

}  // namespace tfdebug::torch
