// What the LibTorch adapter and the op profiler both need to put an op in a module
// (Note [Module of an op] in attach.cpp): which module's parameters an op reads, and, for backward
// ops, the module of the forward op that shares their autograd sequence number. Module ids are
// the caller's own (each interns its paths); 0 means unknown.
#pragma once

#include <ATen/record_function.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace tfdebug::torch::detail {

// The path of the innermost tfdebug::torch::Scope alive on this thread; "" when none.
std::string_view current_scope() noexcept;

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
// RecordFunction callback's inputs(), with needsInputs; or the arguments on a boxed kernel's stack).
template <typename Values>
std::uint32_t module_of_inputs(const StorageModules& modules, const Values& inputs) {
  for (const auto& value : inputs) {
    if (!value.isTensor()) continue;
    // unsafe_storage: no check, and an empty Storage for tensors without one (sparse, undefined)
    const auto& storage = value.toTensor().unsafeGetTensorImpl()->unsafe_storage();
    if (!storage) continue;
    if (const std::uint32_t module = modules.module_of(storage.data())) return module;
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
