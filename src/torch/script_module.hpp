// A TorchScript file loaded for interpretability (load_torchscript, load_torchscript_layer,
// load_torchscript_rules): one place that reads it and says plainly when it cannot. Private to
// tfdebug::torch; defined in torchscript_model.cpp.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tfdebug/torch/interpret_model.hpp"

namespace torch::jit {
struct Module;
}  // namespace torch::jit

namespace tfdebug::torch::detail {

// torch::jit::load on the CPU, in eval mode, shared (the model's forward function owns it).
// tfdebug::Error naming the file, and how to write one, when it cannot be loaded.
std::shared_ptr<::torch::jit::Module> load_script_module(const std::string& path);

// Every parameter of `module` with its module path ("enc.layers.0.linear1" for
// "enc.layers.0.linear1.weight"): what tells the ops of a TorchScript forward apart by module.
std::vector<ModuleParameter> script_parameters(const ::torch::jit::Module& module);

}  // namespace tfdebug::torch::detail
