#include "module_attribution.hpp"

#include <ATen/core/Tensor.h>  // at::Tensor defined: caffe2 forward-declares a Tensor of its own
#include <torch/nn/functional/instancenorm.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/instancenorm.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/normalization.h>

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tfdebug::torch::detail {

Interner& module_paths() {
  static Interner* paths = new Interner();  // never destroyed: ids outlive every attachment
  return *paths;
}

void for_each_module(::torch::nn::Module& root,
                     const std::function<void(const std::string& path, ::torch::nn::Module& module)>& f) {
  // The root itself by reference: named_modules(include_self) needs it held by a shared_ptr, and a
  // model on the stack is not.
  f(std::string(), root);
  for (const auto& named : root.named_modules(/*name_prefix=*/"", /*include_self=*/false))
    f(named.key(), *named.value());
}

namespace {

template <typename Conv>
bool zero_padded(const ::torch::nn::Module& module) {
  const auto* conv = dynamic_cast<const Conv*>(&module);
  return conv != nullptr && c10::holds_alternative<::torch::enumtype::kZeros>(conv->options.padding_mode());
}

template <typename... Layers>
bool one_of(const ::torch::nn::Module& module) {
  return ((dynamic_cast<const Layers*>(&module) != nullptr) || ...);
}

// Note [Between two layers of a Sequential]: a layer of LibTorch's whose forward is its
// parameters' op alone, nothing before it or after it.
bool parameters_op_alone(const ::torch::nn::Module& m) {
  namespace nn = ::torch::nn;
  return one_of<nn::LinearImpl, nn::BilinearImpl, nn::EmbeddingImpl, nn::LayerNormImpl, nn::GroupNormImpl,
                nn::BatchNorm1dImpl, nn::BatchNorm2dImpl, nn::BatchNorm3dImpl, nn::InstanceNorm1dImpl,
                nn::InstanceNorm2dImpl, nn::InstanceNorm3dImpl, nn::PReLUImpl>(m) ||
         zero_padded<nn::Conv1dImpl>(m) || zero_padded<nn::Conv2dImpl>(m) || zero_padded<nn::Conv3dImpl>(m);
}

// Note [Between two layers of a Sequential]: the ops a child without parameters may run, as the
// adapter sees them (after LibTorch's composite ops have decomposed); nullopt for a kind whose ops
// are not known.
std::optional<std::span<const std::string_view>> ops_of(const ::torch::nn::Module& m) {
  namespace nn = ::torch::nn;
  using Ops = std::span<const std::string_view>;
  static constexpr std::string_view kRelu[] = {"aten::relu", "aten::relu_"};
  static constexpr std::string_view kHardtanh[] = {"aten::hardtanh", "aten::hardtanh_"};
  static constexpr std::string_view kLeakyRelu[] = {"aten::leaky_relu", "aten::leaky_relu_"};
  static constexpr std::string_view kElu[] = {"aten::elu",   "aten::elu_", "aten::selu",
                                              "aten::selu_", "aten::celu", "aten::celu_"};
  static constexpr std::string_view kGelu[] = {"aten::gelu"};
  static constexpr std::string_view kSilu[] = {"aten::silu", "aten::silu_"};
  static constexpr std::string_view kMish[] = {"aten::mish", "aten::mish_"};
  static constexpr std::string_view kSigmoid[] = {"aten::sigmoid", "aten::sigmoid_"};
  static constexpr std::string_view kTanh[] = {"aten::tanh", "aten::tanh_"};
  static constexpr std::string_view kSoftplus[] = {"aten::softplus"};
  static constexpr std::string_view kSoftmax[] = {"aten::softmax", "aten::_softmax"};
  static constexpr std::string_view kLogSoftmax[] = {"aten::log_softmax", "aten::_log_softmax"};
  // at::dropout and its kin on the CPU: a noise tensor (empty_like, or empty for a channel's),
  // bernoulli_, div_ by the keep probability, the product; nothing in eval.
  static constexpr std::string_view kDropout[] = {"aten::dropout",
                                                  "aten::dropout_",
                                                  "aten::feature_dropout",
                                                  "aten::alpha_dropout",
                                                  "aten::feature_alpha_dropout",
                                                  "aten::native_dropout",
                                                  "aten::empty_like",
                                                  "aten::empty",
                                                  "aten::bernoulli_",
                                                  "aten::div_",
                                                  "aten::mul",
                                                  "aten::mul_",
                                                  "aten::add",
                                                  "aten::add_"};
  if (one_of<nn::ReLUImpl>(m)) return Ops(kRelu);
  if (one_of<nn::ReLU6Impl, nn::HardtanhImpl>(m)) return Ops(kHardtanh);
  if (one_of<nn::LeakyReLUImpl>(m)) return Ops(kLeakyRelu);
  if (one_of<nn::ELUImpl, nn::SELUImpl, nn::CELUImpl>(m)) return Ops(kElu);
  if (one_of<nn::GELUImpl>(m)) return Ops(kGelu);
  if (one_of<nn::SiLUImpl>(m)) return Ops(kSilu);
  if (one_of<nn::MishImpl>(m)) return Ops(kMish);
  if (one_of<nn::SigmoidImpl>(m)) return Ops(kSigmoid);
  if (one_of<nn::TanhImpl>(m)) return Ops(kTanh);
  if (one_of<nn::SoftplusImpl>(m)) return Ops(kSoftplus);
  if (one_of<nn::SoftmaxImpl>(m)) return Ops(kSoftmax);
  if (one_of<nn::LogSoftmaxImpl>(m)) return Ops(kLogSoftmax);
  if (one_of<nn::DropoutImpl, nn::Dropout2dImpl, nn::Dropout3dImpl, nn::AlphaDropoutImpl,
             nn::FeatureAlphaDropoutImpl>(m))
    return Ops(kDropout);
  if (one_of<nn::FlattenImpl, nn::UnflattenImpl, nn::IdentityImpl>(m)) return Ops();  // views only
  return std::nullopt;
}

// Note [Between two layers of a Sequential]: for each child of `sequential` (at `path`) whose
// forward is its parameters' op alone, followed by children without parameters and then another
// such child, the children between (one of any kind, or several of known kinds).
void map_between(const std::string& path, ::torch::nn::Module& sequential, Interner& names,
                 ModuleTree& tree) {
  const auto children = sequential.named_children();
  const auto id = [&](std::size_t i) {
    return names.intern(path.empty() ? children[i].key() : path + "." + children[i].key());
  };
  for (std::size_t i = 0; i < children.size(); ++i) {
    const auto& layer = *children[i].value();
    if (layer.parameters().empty() || !parameters_op_alone(layer)) continue;
    std::size_t next = i + 1;
    while (next < children.size() && children[next].value()->parameters().empty()) ++next;
    if (next == i + 1 || next == children.size() || !parameters_op_alone(*children[next].value())) continue;
    std::vector<ModuleTree::Child> between;
    for (std::size_t c = i + 1; c < next; ++c) {
      const auto ops = ops_of(*children[c].value());
      if (!ops && next - i > 2) break;  // a kind whose ops are not known, among several
      between.push_back({id(c), ops.value_or(std::span<const std::string_view>())});
    }
    if (between.size() == next - i - 1) tree.add_between(id(i), std::move(between));
  }
}

}  // namespace

void map_modules(::torch::nn::Module& root, Interner& names, ModuleTree& tree, StorageModules& storage) {
  for_each_module(root, [&](const std::string& path, ::torch::nn::Module& module) {
    if (dynamic_cast<const ::torch::nn::SequentialImpl*>(&module) != nullptr)
      map_between(path, module, names, tree);
    const std::uint32_t id = names.intern(path);
    const auto dot = path.rfind('.');
    tree.add(id, names.intern(dot == std::string::npos ? std::string_view()
                                                       : std::string_view(path).substr(0, dot)));
    for (const auto& parameter : module.named_parameters(/*recurse=*/false)) {
      const auto& tensor = parameter.value();
      if (tensor.defined() && tensor.has_storage()) storage.emplace(tensor.storage().data(), id);
    }
  });
}

void map_parameters(std::span<const ModuleParameter> parameters, Interner& names, ModuleTree& tree,
                    StorageModules& storage) {
  for (const ModuleParameter& p : parameters) {
    const std::uint32_t id = names.intern(p.module);
    // The module and each of its ancestors, with its parent: "a.b.c" adds a.b.c, a.b and a.
    for (std::string_view path = p.module; !path.empty();) {
      const auto dot = path.rfind('.');
      const std::string_view parent =
          dot == std::string_view::npos ? std::string_view() : path.substr(0, dot);
      tree.add(names.intern(path), names.intern(parent));
      path = parent;
    }
    storage.emplace(p.storage, id);
  }
}

}  // namespace tfdebug::torch::detail
