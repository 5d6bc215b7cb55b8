// load_torchscript_rules and parameter_paths for TorchScript modules (rule_model.hpp). Apart from
// rule_model.cpp because torch/script.h is what clang-tidy cannot parse (scripts/lint.sh).
#include <torch/csrc/jit/runtime/graph_executor.h>
#include <torch/script.h>

#include <memory>
#include <string>

#include "script_module.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/torch/rule_model.hpp"

namespace tfdebug::torch {

ParameterPaths parameter_paths(const ::torch::jit::Module& module) {
  ParameterPaths paths;
  for (const auto& p : module.named_parameters(/*recurse=*/true)) paths.add(p.name, p.value);
  return paths;
}

TorchRuleModel load_torchscript_rules(const std::string& path, std::vector<std::int64_t> input_shape) {
  const std::shared_ptr<::torch::jit::Module> module = detail::load_script_module(path);
  ParameterPaths paths = parameter_paths(*module);
  try {
    // The graph executor's optimised plans fuse ops into differentiable subgraphs whose inner ops
    // autograd does not see; the rules need each op (Note [Rules at ops]), so the plain plan runs.
    return TorchRuleModel(
        [module](const at::Tensor& batch) {
          const ::torch::jit::GraphOptimizerEnabledGuard plain_plan(false);
          return module->forward({batch}).toTensor();
        },
        std::move(input_shape), std::move(paths));
  } catch (const Error& e) {
    throw Error(path + ": " + e.what());
  }
}

}  // namespace tfdebug::torch
