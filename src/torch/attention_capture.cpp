// Note [Attention from softmax] (attention_capture.hpp).
#include "tfdebug/torch/attention_capture.hpp"

#include <ATen/core/Tensor.h>
#include <ATen/core/grad_mode.h>
#include <ATen/ops/from_blob.h>

#include <optional>
#include <string>

#include "module_attribution.hpp"
#include "op_override.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/core/interner.hpp"

namespace tfdebug::torch {
namespace {

// Sees every op of a forward; for each attention softmax, records its probabilities or scales
// its heads.
class AttentionOverride : public detail::OpOverride {
 public:
  AttentionOverride(::torch::nn::Module& root, std::int64_t batch) : batch_(batch) {
    detail::map_modules(root, names_, tree_, storage_);
  }
  AttentionOverride(std::span<const ModuleParameter> parameters, std::int64_t batch) : batch_(batch) {
    detail::map_parameters(parameters, names_, tree_, storage_);
  }

  void call(const c10::OperatorHandle& op, c10::DispatchKeySet keys, ::torch::jit::Stack* stack) override {
    const auto& schema = op.schema();
    const bool softmax = schema.name() == "aten::softmax" || schema.name() == "aten::_softmax";
    const auto arguments = ::torch::jit::last(*stack, schema.arguments().size());
    std::int64_t dim = 0, rank = 0;
    if (softmax) {
      rank = arguments[0].toTensor().dim();
      dim = arguments[1].toInt();
    }
    const std::uint32_t parameter = softmax ? 0 : detail::module_of_inputs(storage_, arguments);
    detail::pass_through(op, keys, stack);
    if (parameter != 0) last_parameter_ = parameter;
    if (softmax && (dim == -1 || dim == rank - 1)) attention(stack->back().toTensor(), stack);
  }

  std::function<void(const std::string& layer, const at::Tensor& probs, ::torch::jit::Stack* stack)>
      on_attention;
  std::int64_t batch_;

 private:
  // probs [batch, heads, n, n] or [batch * heads, n, n] (Note [Attention from softmax]).
  void attention(const at::Tensor& probs, ::torch::jit::Stack* stack) {
    const auto n = probs.size(-1);
    if (probs.dim() < 3 || probs.dim() > 4 || probs.size(-2) != n) return;
    std::int64_t heads = 0;
    if (probs.dim() == 4 && probs.size(0) == batch_) heads = probs.size(1);
    if (probs.dim() == 3 && probs.size(0) % batch_ == 0) heads = probs.size(0) / batch_;
    if (heads == 0) return;
    detail::ModuleClues clues;
    clues.scope = detail::current_scope_id();
    clues.last_parameter = last_parameter_;
    clues.op = "aten::softmax";
    const std::uint32_t module = detail::forward_module(tree_, clues);
    std::string layer(module == 0 ? std::string_view("(top level)") : names_.name(module));
    on_attention(layer, probs.reshape({batch_, heads, n, n}), stack);
  }

  Interner names_;
  detail::ModuleTree tree_;
  detail::StorageModules storage_;
  std::uint32_t last_parameter_ = 0;
};

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string s;
  for (const auto d : shape) s.append(s.empty() ? "" : " x ").append(std::to_string(d));
  return s;
}

interpret::AttentionMaps capture_with(AttentionOverride& capture, const std::function<void()>& forward,
                                      std::int64_t example) {
  if (capture.batch_ < 1 || example < 0 || example >= capture.batch_)
    throw Error("capture_attention: example " + std::to_string(example) + " of a batch of " +
                std::to_string(capture.batch_));
  interpret::AttentionMaps maps;
  capture.on_attention = [&](const std::string& layer, const at::Tensor& probs, ::torch::jit::Stack*) {
    const std::int64_t heads = probs.size(1), n = probs.size(2);
    if (!maps.layers.empty() && (heads != maps.heads || n != maps.tokens)) {
      throw Error("attention of " + layer + " is " + shape_text({heads, n, n}) +
                  " (heads x queries x keys); " + maps.layers.front() + "'s was " +
                  shape_text({maps.heads, maps.tokens, maps.tokens}));
    }
    maps.layers.push_back(layer);
    maps.heads = heads;
    maps.tokens = n;
    const at::Tensor one = probs.select(0, example).to(at::kDouble).contiguous();
    const double* p = one.data_ptr<double>();
    maps.weights.insert(maps.weights.end(), p, p + one.numel());
  };
  {
    detail::OverrideScope scope(capture);
    forward();
  }
  if (maps.layers.empty())
    throw Error("no attention softmax ran in the forward pass (a fused attention kernel hides its weights)");
  return maps;
}

void run_scaled(AttentionOverride& mask, const std::function<void()>& forward,
                std::span<const float> head_scale) {
  std::size_t used = 0;
  mask.on_attention = [&](const std::string& layer, const at::Tensor& probs, ::torch::jit::Stack* stack) {
    const auto heads = static_cast<std::size_t>(probs.size(1));
    if (used + heads > head_scale.size()) {
      throw Error("head scales: " + std::to_string(head_scale.size()) + " values do not reach the heads of " +
                  layer);
    }
    const at::Tensor scale = at::from_blob(const_cast<float*>(head_scale.data() + used),
                                           {1, probs.size(1), 1, 1}, at::TensorOptions().dtype(at::kFloat))
                                 .to(probs.scalar_type());
    used += heads;
    const at::Tensor original = stack->back().toTensor();
    stack->back() = probs.mul(scale).reshape(original.sizes());
  };
  {
    detail::OverrideScope scope(mask);
    forward();
  }
  if (used != head_scale.size()) {
    throw Error("head scales: " + std::to_string(head_scale.size()) + " values for " + std::to_string(used) +
                " attention heads");
  }
}

}  // namespace

interpret::AttentionMaps capture_attention(::torch::nn::Module& root, const std::function<void()>& forward,
                                           std::int64_t batch, std::int64_t example) {
  AttentionOverride source(root, batch);
  return capture_with(source, forward, example);
}

interpret::AttentionMaps capture_attention(std::span<const ModuleParameter> parameters,
                                           const std::function<void()>& forward, std::int64_t batch,
                                           std::int64_t example) {
  AttentionOverride source(parameters, batch);
  return capture_with(source, forward, example);
}

void run_with_head_scale(::torch::nn::Module& root, const std::function<void()>& forward,
                         std::span<const float> head_scale, std::int64_t batch) {
  AttentionOverride mask(root, batch);
  run_scaled(mask, forward, head_scale);
}

void run_with_head_scale(std::span<const ModuleParameter> parameters, const std::function<void()>& forward,
                         std::span<const float> head_scale, std::int64_t batch) {
  AttentionOverride mask(parameters, batch);
  run_scaled(mask, forward, head_scale);
}

TorchAttentionModel::TorchAttentionModel(::torch::nn::Module& root, TorchModel::Forward forward,
                                         std::vector<std::int64_t> input_shape)
    : root_(&root), function_(forward), model_(std::move(forward), std::move(input_shape)) {}

TorchAttentionModel::TorchAttentionModel(std::vector<ModuleParameter> parameters, TorchModel::Forward forward,
                                         std::vector<std::int64_t> input_shape)
    : parameters_(std::move(parameters)),
      function_(forward),
      model_(std::move(forward), std::move(input_shape)) {}

namespace {

at::Tensor example_batch(std::span<const float> x, const std::vector<std::int64_t>& input_shape) {
  std::vector<std::int64_t> shape = input_shape;
  shape.insert(shape.begin(), 1);
  std::int64_t numel = 1;
  for (const auto d : input_shape) numel *= d;
  if (static_cast<std::int64_t>(x.size()) != numel)
    throw Error("the input has " + std::to_string(x.size()) + " values; the model takes " +
                std::to_string(numel));
  return at::from_blob(const_cast<float*>(x.data()), shape, at::TensorOptions().dtype(at::kFloat)).clone();
}

}  // namespace

interpret::AttentionMaps TorchAttentionModel::attention(std::span<const float> x) {
  const at::Tensor batch = example_batch(x, model_.input_shape());
  const at::NoGradGuard no_grad;
  const auto run = [&] { (void)function_(batch); };
  return root_ != nullptr ? capture_attention(*root_, run) : capture_attention(parameters_, run);
}

void TorchAttentionModel::forward_with_heads(std::span<const float> x, std::span<const float> head_scale,
                                             std::span<float> outputs) {
  const at::Tensor batch = example_batch(x, model_.input_shape());
  const at::NoGradGuard no_grad;
  at::Tensor y;
  const auto run = [&] { y = function_(batch); };
  if (root_ != nullptr) {
    run_with_head_scale(*root_, run, head_scale);
  } else {
    run_with_head_scale(parameters_, run, head_scale);
  }
  y = y.to(at::kFloat).reshape({-1}).contiguous();
  if (y.numel() != model_.output_size())
    throw Error("the model returned " + std::to_string(y.numel()) + " outputs with heads masked; expected " +
                std::to_string(model_.output_size()));
  std::copy_n(y.data_ptr<float>(), y.numel(), outputs.begin());
}

}  // namespace tfdebug::torch
