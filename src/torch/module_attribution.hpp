// Which module an op runs in: the one decision that the LibTorch adapter, the op profiler and the
// graph tracer all take from here, so that a finding, a profile row and a graph node name the same
// module (Note [Module of an op]). Module ids are those of an Interner the caller keeps (the
// adapter's and the tracer's: module_paths(); the profiler's: its own); 0 means unknown or the
// top level.
//
// Note [Module of an op]
// Forward, in this order:
//   1. the module of a parameter the op reads (its storage is one of the module's parameters',
//      so views such as weight.t() count): linear, embedding, layer_norm run in their layer;
//   2. the innermost tfdebug::torch::Scope (or RECORD_USER_SCOPE range) alive on the thread;
//   3. the module of the op that called this one, for ops inside other ops (the profiler sees
//      them; the adapter with AttachOptions::nested_ops);
//   4. the parent of the module whose parameters the thread read last in this step: code between
//      layers runs in their parent's forward, so the attention scores after attn.k (q @ k^T, the
//      softmax) run in attn, and log(2 + h) after mlp.fc1 runs in mlp; unless that module has
//      submodules of its own, whose forward then uses its own parameters directly and goes on in
//      it: MultiheadAttention reads self_attn.in_proj_weight and computes the scores and the
//      softmax itself before its out_proj; and unless it sits in a torch::nn::Sequential with one
//      module between it and the next (Note [Between two layers of a Sequential]);
//   5. otherwise the top level.
//
// Note [Between two layers of a Sequential]
// A torch::nn::Sequential runs its children in order and nothing else, so in
// Sequential(Linear, ReLU, Linear) every op after the first Linear's and before the second's runs
// in the ReLU, which has no parameter to place it by (rule 4 said the Sequential). The ReLU is
// named when that is certain: the children between two layers have no parameters, and the two
// layers are of a kind whose forward is its parameters' op alone (Linear, Conv with zero padding,
// Embedding, the norms, PReLU: nothing runs after the first's op nor before the second's, but for
// BatchNorm's count of batches, a buffer's add_); then one child between runs every op there,
// and of several (ReLU, Dropout), each of a kind whose ops are known (an activation's, dropout's,
// none for Flatten or Identity), the one whose kind runs the op does. A GRU or a module of the
// user's on either side (its forward may run ops of its own after or before its parameters'), a
// child of another kind among several, an op that none or two of them run, or a last child (its
// ops and those of the Sequential's caller after it look the same) keep rule 4's answer.
// Backward: the autograd sequence numbers a forward op consumed (at::sequence_number::peek()
// before and after it: its node and its inner ops' nodes) record its module in a ring indexed by
// number (SequenceModules); a backward node with the same number (Node::sequence_nr) looks it up,
// and the ops inside the node run in that module. Optimizer: the module of a parameter it reads.
#pragma once

#include <ATen/record_function.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tfdebug/core/interner.hpp"
#include "tfdebug/torch/interpret_model.hpp"

namespace torch::nn {
class Module;
}  // namespace torch::nn

namespace tfdebug::torch::detail {

// The module paths of every attachment and trace of the process: ids outlive each of them
// (never destroyed).
Interner& module_paths();

// The path of the innermost tfdebug::torch::Scope alive on this thread; "" when none.
std::string_view current_scope() noexcept;
// Its id in module_paths(); 0 when none.
std::uint32_t current_scope_id() noexcept;

// Module id -> its parent's id, from named_modules() ("blocks.0.attn.q" -> "blocks.0.attn").
class ModuleTree {
 public:
  void add(std::uint32_t module, std::uint32_t parent) {
    parent_[module] = parent;
    if (module != parent) has_children_[parent] = true;
  }
  std::uint32_t parent(std::uint32_t module) const noexcept {
    const auto it = parent_.find(module);
    return it == parent_.end() ? 0 : it->second;
  }
  bool has_children(std::uint32_t module) const noexcept { return has_children_.count(module) != 0; }
  // Note [Between two layers of a Sequential]: a child between two layers, and the ops its kind
  // runs (unused for the one child between two layers, which runs every op there).
  struct Child {
    std::uint32_t module = 0;
    std::span<const std::string_view> ops;
  };
  // `children` run every op after `layer`'s until the next parameter read.
  void add_between(std::uint32_t layer, std::vector<Child> children) {
    between_[layer] = std::move(children);
  }
  // The module that runs `op` after `layer`'s, 0 when not known.
  std::uint32_t between(std::uint32_t layer, std::string_view op) const noexcept {
    if (between_.empty()) return 0;
    const auto it = between_.find(layer);
    if (it == between_.end()) return 0;
    if (it->second.size() == 1) return it->second.front().module;
    std::uint32_t found = 0;
    for (const Child& child : it->second) {
      if (std::find(child.ops.begin(), child.ops.end(), op) == child.ops.end()) continue;
      if (found != 0) return 0;  // two children run it
      found = child.module;
    }
    return found;
  }

 private:
  std::unordered_map<std::uint32_t, std::uint32_t> parent_;
  std::unordered_map<std::uint32_t, bool> has_children_;
  std::unordered_map<std::uint32_t, std::vector<Child>> between_;
};

// What is known about a forward op when its module is decided (0: nothing).
struct ModuleClues {
  std::uint32_t parameter = 0;       // the module of a parameter the op reads
  std::uint32_t scope = 0;           // the innermost Scope on the thread
  std::uint32_t enclosing = 0;       // the module of the op that called this one
  bool enclosed = false;             // there is such an op (its module may be the top level, 0)
  std::uint32_t last_parameter = 0;  // the module of the thread's last parameter-reading op this step
  std::string_view op;               // the op's name ("aten::relu")
};

// Note [Module of an op]: the module of a forward op.
inline std::uint32_t forward_module(const ModuleTree& tree, const ModuleClues& c) noexcept {
  if (c.parameter != 0) return c.parameter;
  if (c.scope != 0) return c.scope;
  if (c.enclosed) return c.enclosing;
  if (c.last_parameter != 0) {
    if (const std::uint32_t between = tree.between(c.last_parameter, c.op)) return between;
    return tree.has_children(c.last_parameter) ? c.last_parameter : tree.parent(c.last_parameter);
  }
  return 0;
}

// Parameter storage -> module id, looked up for the tensor arguments of every forward and
// optimizer op: an open-addressing table keyed by the storage's data pointer (a few
// instructions per miss, where std::unordered_map hashed, divided and walked a bucket). Keys are
// never removed; the first module added for a storage keeps it.
class StorageModules {
 public:
  void emplace(const void* storage, std::uint32_t module) {
    if (storage == nullptr || module == 0 || module_of(storage) != 0) return;
    if (2 * (count_ + 1) > slots_.size()) grow();
    insert(storage, module);
  }
  std::uint32_t module_of(const void* storage) const noexcept {
    if (slots_.empty() || storage == nullptr) return 0;
    for (std::size_t i = slot_of(storage);; i = (i + 1) & (slots_.size() - 1)) {
      if (slots_[i].storage == storage) return slots_[i].module;
      if (slots_[i].storage == nullptr) return 0;
    }
  }

 private:
  struct Slot {
    const void* storage = nullptr;
    std::uint32_t module = 0;
  };
  std::size_t slot_of(const void* storage) const noexcept {
    return std::size_t((reinterpret_cast<std::uintptr_t>(storage) >> 4) * 0x9E3779B97F4A7C15ULL) &
           (slots_.size() - 1);
  }
  void insert(const void* storage, std::uint32_t module) {
    std::size_t i = slot_of(storage);
    while (slots_[i].storage != nullptr) i = (i + 1) & (slots_.size() - 1);
    slots_[i] = {storage, module};
    ++count_;
  }
  void grow() {
    std::vector<Slot> old(std::max<std::size_t>(64, 2 * slots_.size()));
    old.swap(slots_);
    count_ = 0;
    for (const Slot& slot : old) {
      if (slot.storage != nullptr) insert(slot.storage, slot.module);
    }
  }
  std::vector<Slot> slots_;  // a power-of-two size, at most half full
  std::size_t count_ = 0;
};

// The module of the first input whose storage is a parameter's (views of it, such as weight.t(),
// share the storage); 0 when the op reads none. `inputs`: an op's boxed arguments (the
// RecordFunction callback's inputs(), with needsInputs; or the arguments on a boxed kernel's
// stack). Lists of tensors count: aten::gru and aten::lstm take their weights as one.
template <typename Values>
std::uint32_t module_of_inputs(const StorageModules& modules, const Values& inputs) {
  const auto module_of = [&](const at::Tensor& tensor) -> std::uint32_t {
    // unsafe_storage: no check, and an empty Storage for tensors without one (sparse, undefined)
    const auto& storage = tensor.unsafeGetTensorImpl()->unsafe_storage();
    return storage ? modules.module_of(storage.data()) : 0;
  };
  for (const auto& value : inputs) {
    if (value.isTensor()) {
      if (const std::uint32_t module = module_of(value.toTensor())) return module;
    } else if (value.isTensorList()) {
      const auto list = value.toTensorList();
      for (std::size_t i = 0; i < list.size(); ++i) {
        const at::Tensor tensor = list.get(i);
        if (!tensor.defined()) continue;
        if (const std::uint32_t module = module_of(tensor)) return module;
      }
    }
  }
  return 0;
}

// Note [Module of an op]: autograd sequence number -> module id of the forward op that consumed it, in a ring
// of the last 65,536 numbers; each slot holds the sequence number (high 40 bits) with the id + 1 (low 24
// bits; 0: none remembered, so that an op at the top level, module 0, is told from a number no op consumed),
// so a stale slot reads as unknown. Lock-free: forward and backward may run on different threads.
class SequenceModules {
 public:
  static constexpr std::uint32_t kUnknown = ~std::uint32_t{0};
  void remember(std::int64_t sequence, std::uint32_t module) {
    if (sequence < 0 || module + 1 >= (1U << 24)) return;
    slots_[std::size_t(sequence) & (kRing - 1)].store((std::uint64_t(sequence) << 24) | (module + 1),
                                                      std::memory_order_relaxed);
  }
  // The module remembered for `sequence`, kUnknown when none.
  std::uint32_t module_of(std::int64_t sequence) const {
    if (sequence < 0) return kUnknown;
    const auto packed = slots_[std::size_t(sequence) & (kRing - 1)].load(std::memory_order_relaxed);
    const auto id = std::uint32_t(packed & ((1U << 24) - 1));
    if (id == 0 || (packed >> 24) != (std::uint64_t(sequence) & ((std::uint64_t{1} << 40) - 1)))
      return kUnknown;
    return id - 1;
  }

 private:
  static constexpr std::size_t kRing = std::size_t{1} << 16;
  std::array<std::atomic<std::uint64_t>, kRing> slots_{};
};

// f(path, module) for `root` (path "") and every module below it, in named_modules() order; works
// for a root that is not held by a shared_ptr.
void for_each_module(::torch::nn::Module& root,
                     const std::function<void(const std::string& path, ::torch::nn::Module& module)>& f);

// Note [Module of an op]: the module of a backward node with this sequence number. A node of a view
// has none of its own (views are not intercepted, Note [Views pass through]): it takes the module
// of the forward op just before it.
inline std::uint32_t backward_module(const SequenceModules& modules, std::int64_t sequence) noexcept {
  for (std::int64_t back = 0; back < 8 && sequence - back >= 0; ++back) {
    const std::uint32_t module = modules.module_of(sequence - back);
    if (module != SequenceModules::kUnknown) return module;  // 0: the top level
  }
  return 0;
}
// After a forward op that is not a view: every autograd sequence number in [first, end) it (and the
// ops inside it) consumed gets its module.
inline void remember_module(SequenceModules& modules, std::uint64_t first, std::uint64_t end,
                            std::uint32_t module) noexcept {
  for (std::uint64_t n = first; n < end && n < first + 4096; ++n) modules.remember(std::int64_t(n), module);
}

// Note [A custom function's node]
// A custom autograd function (torch::autograd::Function) makes its backward node before its
// forward runs, and no intercepted op makes it: the number the node took sits between the
// previous forward op's numbers and the next's, and backward_module's look-back gave it the
// previous op's module (fc1's, for a function applied after fc1 in a module of its own: a NaN of
// its hand-written gradient was named in a layer that did nothing wrong). Its forward runs
// without grad mode, right after: so the numbers taken since the last forward op on this thread
// (`last_end`), when the op that follows them runs without grad mode, are a custom function's
// node and go to that op's module, where its forward's ops are. A view's node (taken with grad
// mode on) keeps the look-back to the op before it. `last_end`: UINT64_MAX when unknown (a new
// step); it becomes `end`.
inline void remember_module_after(SequenceModules& modules, std::uint64_t& last_end, std::uint64_t first,
                                  std::uint64_t end, std::uint32_t module, bool grad_mode) noexcept {
  constexpr std::uint64_t kNodesOfOneCall = 4;  // the function's node, and views of its inputs
  if (!grad_mode && last_end < first && first - last_end <= kNodesOfOneCall)
    remember_module(modules, last_end, first, module);
  remember_module(modules, first, end, module);
  last_end = end;
}

// Every module of `root` interned in `names` (the root is ""), with its parent, and each
// parameter's storage with its module.
void map_modules(::torch::nn::Module& root, Interner& names, ModuleTree& tree, StorageModules& storage);

// The same from a list of parameters by module path (a TorchScript module's): every module on the
// paths, with its parent, and each parameter's storage with its module.
void map_parameters(std::span<const ModuleParameter> parameters, Interner& names, ModuleTree& tree,
                    StorageModules& storage);

}  // namespace tfdebug::torch::detail
