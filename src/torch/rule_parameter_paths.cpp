// parameter_paths for a torch::nn::Module (rule_model.hpp). Apart from rule_model.cpp because
// torch/nn/module.h is a heavy header.
#include <torch/nn/module.h>

#include "tfdebug/torch/rule_model.hpp"

namespace tfdebug::torch {

ParameterPaths parameter_paths(const ::torch::nn::Module& module) {
  ParameterPaths paths;
  for (const auto& p : module.named_parameters(/*recurse=*/true)) paths.add(p.key(), p.value());
  return paths;
}

}  // namespace tfdebug::torch
