// What the LibTorch adapter and the op profiler both need to put an op in a module
// (Note [Module of an op] in attach.cpp): which module's parameters an op reads, and, for backward
// ops, the module of the forward op that shares their autograd sequence number. Module ids are
// the caller's own (each interns its paths); 0 means unknown.
#pragma once

#include <ATen/record_function.h>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <unordered_map>

namespace tfdebug::torch::detail {

// The path of the innermost tfdebug::torch::Scope alive on this thread; "" when none.
std::string_view current_scope() noexcept;

// Parameter storage -> module id.
using StorageModules = std::unordered_map<const void*, std::uint32_t>;

// The module of the first input whose storage is a parameter's (views of it, such as weight.t(),
// share the storage); 0 when the op reads none. `inputs`: an op's boxed arguments (the
// RecordFunction callback's inputs(), with needsInputs; or the arguments on a boxed kernel's stack).
template <typename Values>
std::uint32_t module_of_inputs(const StorageModules& modules, const Values& inputs) {
  for (const auto& value : inputs) {
    if (!value.isTensor()) continue;
    const auto& tensor = value.toTensor();
    if (!tensor.defined() || !tensor.has_storage()) continue;
    auto it = modules.find(tensor.storage().data());
    if (it != modules.end()) return it->second;
  }
  return 0;
}

// Autograd sequence number -> module id of the forward op that consumed it, in a ring of the last
// 65,536 numbers; each slot holds the sequence number (high 40 bits) with the id (low 24 bits),
// so a stale slot reads as unknown. Lock-free: forward and backward may run on different threads.
class SequenceModules {
 public:
  void remember(std::int64_t sequence, std::uint32_t module) {
    if (sequence < 0 || module >= (1U << 24)) return;
    slots_[std::size_t(sequence) & (kRing - 1)].store((std::uint64_t(sequence) << 24) | module,
                                                      std::memory_order_relaxed);
  }
  std::uint32_t module_of(std::int64_t sequence) const {
    if (sequence < 0) return 0;
    const auto packed = slots_[std::size_t(sequence) & (kRing - 1)].load(std::memory_order_relaxed);
    if ((packed >> 24) != (std::uint64_t(sequence) & ((std::uint64_t{1} << 40) - 1))) return 0;
    return std::uint32_t(packed & ((1U << 24) - 1));
  }

 private:
  static constexpr std::size_t kRing = std::size_t{1} << 16;
  std::array<std::atomic<std::uint64_t>, kRing> slots_{};
};

}  // namespace tfdebug::torch::detail
