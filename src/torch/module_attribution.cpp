#include "module_attribution.hpp"

#include <torch/nn/functional/instancenorm.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/instancenorm.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/normalization.h>

#include <functional>
#include <string>

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

// Note [Between two layers of a Sequential]: for each child of `sequential` (at `path`) followed by
// exactly one child without parameters and then one with, both of them parameters_op_alone, the
// one between runs the ops after the first.
void map_between(const std::string& path, ::torch::nn::Module& sequential, Interner& names,
                 ModuleTree& tree) {
  const auto children = sequential.named_children();
  const auto id = [&](std::size_t i) {
    return names.intern(path.empty() ? children[i].key() : path + "." + children[i].key());
  };
  for (std::size_t i = 0; i + 2 < children.size(); ++i) {
    const auto& layer = *children[i].value();
    const auto& between = *children[i + 1].value();
    const auto& next = *children[i + 2].value();
    if (layer.parameters().empty() || !between.parameters().empty() || next.parameters().empty()) continue;
    if (parameters_op_alone(layer) && parameters_op_alone(next)) tree.add_between(id(i), id(i + 1));
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
