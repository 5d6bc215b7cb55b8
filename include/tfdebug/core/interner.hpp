// Interner: strings to small integer ids and back. An id, once given, means the same string for
// the interner's whole life, and reading an id's string takes no lock (it is a few loads), so
// hot paths keep ids (module paths, op names) and turn them into text only when they report.
// Id 0 is the empty string; a string beyond the capacity gets 0 too, and is counted.
//
//   tfdebug::Interner names;
//   const std::uint32_t id = names.intern("blocks.0.attn");   // takes a lock
//   std::string_view path = names.name(id);                   // lock-free, valid while `names` lives
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

namespace tfdebug {

class Interner {
 public:
  // At most `capacity` distinct strings (ids 1 .. capacity - 1; 0 is "").
  explicit Interner(std::uint32_t capacity = 1U << 16);
  ~Interner();
  Interner(const Interner&) = delete;
  Interner& operator=(const Interner&) = delete;

  // The id of `s`, made on first sight. Thread-safe.
  std::uint32_t intern(std::string_view s);
  // The string of `id`; "" for 0 and for ids never given. Thread-safe, lock-free.
  std::string_view name(std::uint32_t id) const noexcept;
  // Strings interned so far (without ""), and those refused beyond the capacity.
  std::uint32_t size() const noexcept { return size_.load(std::memory_order_acquire); }
  std::uint64_t refused() const noexcept { return refused_.load(std::memory_order_relaxed); }

 private:
  static constexpr std::uint32_t kChunk = 4096;
  using Chunk = std::array<std::atomic<const std::string*>, kChunk>;

  std::uint32_t capacity_;
  std::mutex mutex_;
  std::deque<std::string> storage_;  // deque: elements never move
  std::map<std::string, std::uint32_t, std::less<>> ids_;
  std::unique_ptr<std::atomic<Chunk*>[]> chunks_;  // capacity / kChunk slots, filled on demand
  std::atomic<std::uint32_t> size_{0};
  std::atomic<std::uint64_t> refused_{0};
};

}  // namespace tfdebug
