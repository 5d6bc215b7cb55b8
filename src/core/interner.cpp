#include "tfdebug/core/interner.hpp"

namespace tfdebug {

Interner::Interner(std::uint32_t capacity)
    : capacity_(capacity < 2 ? 2 : capacity),
      chunks_(new std::atomic<Chunk*>[(capacity_ + kChunk - 1) / kChunk]) {
  for (std::uint32_t i = 0; i < (capacity_ + kChunk - 1) / kChunk; ++i) chunks_[i].store(nullptr);
}

Interner::~Interner() {
  for (std::uint32_t i = 0; i < (capacity_ + kChunk - 1) / kChunk; ++i) delete chunks_[i].load();
}

std::uint32_t Interner::intern(std::string_view s) {
  if (s.empty()) return 0;
  const std::lock_guard lock(mutex_);
  if (const auto it = ids_.find(s); it != ids_.end()) return it->second;
  const std::uint32_t id = size_.load(std::memory_order_relaxed) + 1;
  if (id >= capacity_) {
    refused_.fetch_add(1, std::memory_order_relaxed);
    return 0;
  }
  const std::string& kept = storage_.emplace_back(s);
  ids_.emplace(kept, id);
  Chunk* chunk = chunks_[id / kChunk].load(std::memory_order_relaxed);
  if (chunk == nullptr) {
    chunk = new Chunk();
    for (auto& slot : *chunk) slot.store(nullptr, std::memory_order_relaxed);
    chunks_[id / kChunk].store(chunk, std::memory_order_release);
  }
  (*chunk)[id % kChunk].store(&kept, std::memory_order_release);
  size_.store(id, std::memory_order_release);
  return id;
}

std::string_view Interner::name(std::uint32_t id) const noexcept {
  if (id == 0 || id >= capacity_) return {};
  const Chunk* chunk = chunks_[id / kChunk].load(std::memory_order_acquire);
  if (chunk == nullptr) return {};
  const std::string* s = (*chunk)[id % kChunk].load(std::memory_order_acquire);
  return s != nullptr ? std::string_view(*s) : std::string_view();
}

}  // namespace tfdebug
