// load_torchscript_layer (layer_model.hpp): a TorchScript file as a TorchLayerModel. Apart from
// torch_layer_model.cpp because torch/script.h is what clang-tidy cannot parse (scripts/lint.sh).
#include <torch/csrc/jit/runtime/graph_executor.h>
#include <torch/script.h>

#include <memory>
#include <string>
#include <vector>

#include "script_module.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/torch/layer_model.hpp"

namespace tfdebug::torch {

TorchLayerModel load_torchscript_layer(const std::string& path, std::vector<std::int64_t> input_shape,
                                       const std::string& layer) {
  const std::shared_ptr<::torch::jit::Module> module = detail::load_script_module(path);
  // The interpreter runs every op through the dispatcher, where the layer's parameters are the
  // module's own tensors; the module is owned by the function, so these stay valid.
  const std::vector<TorchLayerModel::Parameter> parameters = detail::script_parameters(*module);
  try {
    return TorchLayerModel(
        [module](const at::Tensor& batch) {
          // Note [Layer capture] needs the layer's ops in the autograd graph: the optimised
          // executor would fuse them into a differentiable graph whose inside autograd never sees.
          const ::torch::jit::GraphOptimizerEnabledGuard unoptimised(false);
          return module->forward({batch}).toTensor();
        },
        parameters, layer, std::move(input_shape));
  } catch (const Error& e) {
    throw Error(path + ": " + e.what());
  }
}

}  // namespace tfdebug::torch
