#include "module_attribution.hpp"

#include <torch/nn/module.h>

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

void map_modules(::torch::nn::Module& root, Interner& names, ModuleTree& tree, StorageModules& storage) {
  for_each_module(root, [&](const std::string& path, ::torch::nn::Module& module) {
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
