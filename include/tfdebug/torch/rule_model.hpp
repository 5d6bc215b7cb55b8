// LibTorch models as the [H] tier (tfdebug/interpret/rule_model.hpp): DeepLIFT, LRP, guided
// backprop and deconvnet on a torch::nn::Module's forward or a TorchScript file, with the rules
// applied to the ops the forward runs, not to its modules (Note [Rules at ops] in
// src/torch/rule_override.cpp): a module called twice, torch::relu called in forward and a
// residual x + f(x) are all handled.
//
//   auto model = tfdebug::torch::load_torchscript_rules("mlp.pt", {4});
//   const auto a = tfdebug::interpret::deeplift(model, x, /*target=*/2);
//
//   Net net;  // any module, in eval mode
//   tfdebug::torch::TorchRuleModel m([&](const at::Tensor& b) { return net->forward(b); }, {3},
//                                    tfdebug::torch::parameter_paths(*net));
//   tfdebug::interpret::LrpOptions o;
//   o.modules = {{"fc1", {.kind = tfdebug::interpret::LrpRuleKind::gamma, .gamma = 1}}};
//   const auto r = tfdebug::interpret::lrp(m, x, 0, o);
//
// As for TorchModel, the forward takes a float32 batch [n, input_shape...] and returns
// [n, outputs] or [n]; examples must be independent, and the batch must stay dimension 0 of the
// tensors that nonlinearities see (DeepLIFT pairs row i with row n + i there). The rules hold
// only while rule_gradient runs, on its thread: the model's ordinary forward and backward, and
// its parameters' .grad, are left as they were.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tfdebug/interpret/rule_model.hpp"
#include "tfdebug/torch/interpret_model.hpp"

namespace torch::nn {
class Module;
}
namespace torch::jit {
struct Module;
}

namespace tfdebug::torch {

// Each parameter's module path ("fc1" for "fc1.weight"), as named_parameters() gives them: how
// LRP's per-module rules find the module of a linear op's weight (by the storage it views).
class ParameterPaths {
 public:
  ParameterPaths();
  ~ParameterPaths();
  ParameterPaths(ParameterPaths&&) noexcept;
  ParameterPaths& operator=(ParameterPaths&&) noexcept;
  // `name` as named_parameters() spells it: "encoder.0.weight".
  void add(const std::string& name, const at::Tensor& parameter);
  // The module path of the parameter whose storage `tensor` views; nullptr when none.
  const std::string* module_of(const at::Tensor& tensor) const;
  bool empty() const;

 private:
  struct Entries;
  std::unique_ptr<Entries> entries_;
};
ParameterPaths parameter_paths(const ::torch::nn::Module& module);
ParameterPaths parameter_paths(const ::torch::jit::Module& module);

class TorchRuleModel : public interpret::RuleModel {
 public:
  // tfdebug::Error as TorchModel's constructor. Without parameter paths every linear op takes
  // BackwardRules::lrp.
  TorchRuleModel(TorchModel::Forward forward, std::vector<std::int64_t> input_shape,
                 ParameterPaths parameters = {});

  std::vector<std::int64_t> input_shape() const override { return plain_.input_shape(); }
  std::int64_t output_size() const override { return plain_.output_size(); }
  void forward(const TensorView& inputs, std::span<float> outputs) override {
    plain_.forward(inputs, outputs);
  }
  void gradient(const TensorView& inputs, std::int64_t target, std::span<float> scores,
                std::span<float> gradients) override {
    plain_.gradient(inputs, target, scores, gradients);
  }
  void rule_gradient(const TensorView& inputs, const TensorView* references, std::int64_t target,
                     const interpret::BackwardRules& rules, std::span<float> scores,
                     std::span<float> reference_scores, std::span<float> gradients) override;

 private:
  TorchModel::Forward forward_;
  TorchModel plain_;
  ParameterPaths parameters_;
};

// load_torchscript's model (interpret_model.hpp) as a TorchRuleModel, with its parameters' paths.
TorchRuleModel load_torchscript_rules(const std::string& path, std::vector<std::int64_t> input_shape);

}  // namespace tfdebug::torch
