// Profiling zones: near-zero-cost scopes, instants and counters recorded on the calling thread
// and collected in the background (tfdebug/profile/collector.hpp starts and stops a recording).
//
//   #include <tfdebug/profile/zone.hpp>
//   void train_step() {
//     TFDEBUG_ZONE("train_step");            // begin now, end at the closing brace
//     { TFDEBUG_ZONE("forward"); forward(); }
//     TFDEBUG_COUNTER("tokens", batch_tokens);  // a numeric series
//     TFDEBUG_INSTANT("checkpoint");            // a point in time
//   }
//
// Names must be string literals (or other strings that outlive the recording): only the pointer
// is stored. Cost (docs/performance.md): when no recording runs, one relaxed atomic load and a
// predicted branch; arguments are not evaluated. While recording, a timestamp (rdtsc on x86-64,
// steady_clock elsewhere) and one 32-byte record written to this thread's single-producer ring
// buffer; no lock and no allocation, except the first event of a thread, which registers the
// thread's buffer once. When the buffer is full (the collector fell behind) the event is dropped
// and counted, never blocking (Note [Full buffer] in src/profile/collector.cpp).
//
// Build with -DTFDEBUG_ENABLE=0 and every TFDEBUG_ macro expands to nothing.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

#if defined(__x86_64__) || defined(_M_X64)
#include <x86intrin.h>
#endif

#ifndef TFDEBUG_ENABLE
#define TFDEBUG_ENABLE 1
#endif

namespace tfdebug::profile {

enum class RecordKind : std::uint32_t { kBegin = 0, kEnd = 1, kInstant = 2, kCounter = 3 };

namespace detail {

// One event as the recording thread writes it. Ticks are converted to nanoseconds by the
// collector (Note [Clock] in src/profile/collector.cpp).
struct Record {
  const char* name;
  std::uint64_t ticks;
  double value;
  RecordKind kind;
  std::uint32_t reserved;
};
static_assert(sizeof(Record) == 32, "records are fixed-size, 32 bytes");

// A single-producer single-consumer ring: the owning thread advances head_, the collector
// advances tail_. Indices grow without wrapping; slot = index & mask.
struct ThreadBuffer {
  alignas(64) std::atomic<std::uint64_t> head{0};
  std::uint64_t cached_tail = 0;  // the producer's last view of tail
  std::atomic<std::uint64_t> dropped{0};
  alignas(64) std::atomic<std::uint64_t> tail{0};
  alignas(64) Record* slots = nullptr;
  std::uint64_t mask = 0;
};

inline std::atomic<bool> g_recording{false};
constinit inline thread_local ThreadBuffer* t_buffer = nullptr;

// Registers the calling thread's buffer (allocates once per thread). Never throws; returns
// nullptr if the buffer cannot be allocated, and the event is then lost.
ThreadBuffer* register_this_thread() noexcept;

inline std::uint64_t now_ticks() noexcept {
#if defined(__x86_64__) || defined(_M_X64)
  return __rdtsc();
#else
  return static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
#endif
}

inline void record(RecordKind kind, const char* name, double value) noexcept {
  ThreadBuffer* buffer = t_buffer;
  if (buffer == nullptr) [[unlikely]] {
    buffer = register_this_thread();
    if (buffer == nullptr) return;
  }
  const std::uint64_t ticks = now_ticks();
  const std::uint64_t head = buffer->head.load(std::memory_order_relaxed);
  if (head - buffer->cached_tail > buffer->mask) [[unlikely]] {
    buffer->cached_tail = buffer->tail.load(std::memory_order_acquire);
    if (head - buffer->cached_tail > buffer->mask) {
      // Only this thread writes dropped, so a load and a store suffice (no locked RMW).
      buffer->dropped.store(buffer->dropped.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
      return;
    }
  }
  buffer->slots[head & buffer->mask] = Record{name, ticks, value, kind, 0};
  buffer->head.store(head + 1, std::memory_order_release);
}

}  // namespace detail

// True while a recording runs (collector.hpp: start() .. stop()).
inline bool recording() noexcept {
  return detail::g_recording.load(std::memory_order_relaxed);
}

// Manual zones: every begin needs an end on the same thread, properly nested.
inline void begin(const char* name) noexcept {
  if (recording()) [[unlikely]]
    detail::record(RecordKind::kBegin, name, 0.0);
}
inline void end(const char* name) noexcept {
  if (recording()) [[unlikely]]
    detail::record(RecordKind::kEnd, name, 0.0);
}
inline void instant(const char* name) noexcept {
  if (recording()) [[unlikely]]
    detail::record(RecordKind::kInstant, name, 0.0);
}
inline void counter(const char* name, double value) noexcept {
  if (recording()) [[unlikely]]
    detail::record(RecordKind::kCounter, name, value);
}

// The RAII scope behind TFDEBUG_ZONE. If the recording starts inside the scope, neither begin
// nor end is recorded; if it stops inside, the end still is, so zones stay balanced.
class Zone {
 public:
  explicit Zone(const char* name) noexcept : name_(recording() ? name : nullptr) {
    if (name_ != nullptr) [[unlikely]]
      detail::record(RecordKind::kBegin, name_, 0.0);
  }
  ~Zone() {
    if (name_ != nullptr) [[unlikely]]
      detail::record(RecordKind::kEnd, name_, 0.0);
  }
  Zone(const Zone&) = delete;
  Zone& operator=(const Zone&) = delete;

 private:
  const char* name_;
};

}  // namespace tfdebug::profile

#define TFDEBUG_PROFILE_CONCAT_INNER(a, b) a##b
#define TFDEBUG_PROFILE_CONCAT(a, b) TFDEBUG_PROFILE_CONCAT_INNER(a, b)

#if TFDEBUG_ENABLE
#define TFDEBUG_ZONE(name)                                                         \
  const ::tfdebug::profile::Zone TFDEBUG_PROFILE_CONCAT(tfdebug_zone_, __LINE__) { \
    name                                                                           \
  }
#define TFDEBUG_ZONE_BEGIN(name) ::tfdebug::profile::begin(name)
#define TFDEBUG_ZONE_END(name) ::tfdebug::profile::end(name)
#define TFDEBUG_INSTANT(name) ::tfdebug::profile::instant(name)
// The value expression is evaluated only while recording.
#define TFDEBUG_COUNTER(name, value)                                                     \
  do {                                                                                   \
    if (::tfdebug::profile::recording()) [[unlikely]]                                    \
      ::tfdebug::profile::detail::record(::tfdebug::profile::RecordKind::kCounter, name, \
                                         static_cast<double>(value));                    \
  } while (false)
#else
#define TFDEBUG_ZONE(name) static_cast<void>(0)
#define TFDEBUG_ZONE_BEGIN(name) static_cast<void>(0)
#define TFDEBUG_ZONE_END(name) static_cast<void>(0)
#define TFDEBUG_INSTANT(name) static_cast<void>(0)
#define TFDEBUG_COUNTER(name, value) static_cast<void>(0)
#endif
