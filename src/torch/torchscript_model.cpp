// load_torchscript (interpret_model.hpp): a TorchScript file as a TorchModel; and
// detail::load_script_module, which every TorchScript loader of tfdebug::torch reads files with. Apart from
// interpret_model.cpp because torch/script.h is what clang-tidy cannot parse (scripts/lint.sh).
#include <torch/script.h>

#include <memory>
#include <string>
#include <vector>

#include "script_module.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/torch/interpret_model.hpp"

namespace tfdebug::torch {

std::shared_ptr<::torch::jit::Module> detail::load_script_module(const std::string& path) {
  std::shared_ptr<::torch::jit::Module> module;
  try {
    module = std::make_shared<::torch::jit::Module>(::torch::jit::load(path, at::Device(at::kCPU)));
  } catch (const std::exception& e) {
    std::string what = e.what();
    if (const auto cut = what.find('\n'); cut != std::string::npos) what.resize(cut);
    throw Error(path +
                ": not a TorchScript file torch::jit::load can read (save one with "
                "torch.jit.script(model).save(path)): " +
                what);
  }
  module->eval();
  return module;
}

std::vector<ModuleParameter> detail::script_parameters(const ::torch::jit::Module& module) {
  std::vector<ModuleParameter> parameters;
  for (const auto& named : module.named_parameters(/*recurse=*/true)) {
    const auto dot = named.name.rfind('.');
    const auto& storage = named.value.unsafeGetTensorImpl()->unsafe_storage();
    parameters.push_back({dot == std::string::npos ? std::string() : named.name.substr(0, dot),
                          storage ? storage.data() : nullptr});
  }
  return parameters;
}

TorchModel load_torchscript(const std::string& path, std::vector<std::int64_t> input_shape) {
  const std::shared_ptr<::torch::jit::Module> module = detail::load_script_module(path);
  try {
    // The function owns the module.
    return TorchModel([module](const at::Tensor& batch) { return module->forward({batch}).toTensor(); },
                      std::move(input_shape));
  } catch (const Error& e) {
    throw Error(path + ": " + e.what());
  }
}

}  // namespace tfdebug::torch
