// load_torchscript_attention (attention_capture.hpp): a TorchScript file as a TorchAttentionModel.
// Apart from attention_capture.cpp because torch/script.h is what clang-tidy cannot parse
// (scripts/lint.sh).
#include <ATen/core/grad_mode.h>
#include <torch/csrc/jit/runtime/graph_executor.h>
#include <torch/script.h>

#include <memory>
#include <string>
#include <vector>

#include "script_module.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/torch/attention_capture.hpp"

namespace tfdebug::torch {

TorchAttentionModel load_torchscript_attention(const std::string& path,
                                               std::vector<std::int64_t> input_shape) {
  const std::shared_ptr<::torch::jit::Module> module = detail::load_script_module(path);
  try {
    return TorchAttentionModel(
        detail::script_parameters(*module),
        [module](const at::Tensor& batch) {
          // Under no_grad PyTorch's nn.TransformerEncoderLayer takes its fused inference kernel
          // (aten::_transformer_encoder_layer_fwd), whose softmax runs inside it, unseen (Note
          // [Attention from softmax]); with gradients recorded it computes the attention op by op.
          const at::AutoGradMode grad(true);
          // And unoptimised, as load_torchscript_layer's: each op of the graph run on its own.
          const ::torch::jit::GraphOptimizerEnabledGuard unoptimised(false);
          return module->forward({batch}).toTensor();
        },
        std::move(input_shape));
  } catch (const Error& e) {
    throw Error(path + ": " + e.what());
  }
}

}  // namespace tfdebug::torch
