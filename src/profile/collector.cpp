// The collector: a registry of per-thread ring buffers and a background thread that drains them.
#include "tfdebug/profile/collector.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <condition_variable>
#include <fstream>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "tfdebug/core/error.hpp"
#include "tfdebug/profile/zone.hpp"

// Note [Full buffer]: a recording thread never waits for the collector. When its ring is full
// (the collector fell behind for buffer_records events), the new event is dropped and the
// thread's dropped count grows; the trace reports it per thread. The collector drains every
// drain_interval, so with the defaults (65,536 records, 200 µs) a thread must record more than
// ~300 million events per second to lose any.
//
// Note [Clock]: on x86-64 records carry raw rdtsc ticks (~7 ns to read, against ~20 ns for
// clock_gettime through the vDSO; docs/performance.md). start() and stop() each read the TSC and
// steady_clock together, and ticks are mapped to nanoseconds linearly between the two. This
// relies on an invariant TSC (constant_tsc/nonstop_tsc: every x86-64 CPU of the last 15 years,
// and what Linux's own clocksource uses). Elsewhere ticks are steady_clock nanoseconds.
//
// Note [Leaked registry]: the registry is allocated once and never destroyed, so threads still
// recording during static destruction never touch a dead object. Buffers of exited threads are
// kept (and reused by nothing); a program that starts many short-lived threads holds one buffer
// per thread it ever recorded on.

namespace tfdebug::profile {
namespace {

using detail::Record;

struct ThreadEntry {
  detail::ThreadBuffer buffer;
  std::unique_ptr<Record[]> storage;
  std::uint32_t tid = 0;
  std::string name;
  // Collector state, guarded by Registry::mutex.
  std::vector<Record> kept;
  std::size_t kept_next = 0;
  std::uint64_t collected = 0;
  std::uint64_t evicted = 0;
  std::uint64_t dropped_at_start = 0;
};

struct Registry {
  std::mutex mutex;
  std::vector<std::unique_ptr<ThreadEntry>> entries;
  RecordingOptions options;
  std::size_t buffer_records = std::size_t{1} << 16;
  bool running = false;
  std::thread collector;
  std::mutex wake_mutex;  // guards stop_requested for wake
  std::condition_variable wake;
  bool stop_requested = false;
  std::uint64_t tick0 = 0;
  std::int64_t steady0 = 0;
  RecordingStats last;
};

Registry& registry() {
  static Registry* const kInstance = new Registry;  // Note [Leaked registry]
  return *kInstance;
}

thread_local ThreadEntry* t_entry = nullptr;

std::int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Called with the registry mutex held.
ThreadEntry* register_locked(Registry& reg) {
  auto entry = std::make_unique<ThreadEntry>();
  const std::size_t capacity = reg.buffer_records;
  entry->storage = std::make_unique<Record[]>(capacity);
  entry->buffer.slots = entry->storage.get();
  entry->buffer.mask = capacity - 1;
  entry->tid = static_cast<std::uint32_t>(::gettid());
  entry->name = "thread " + std::to_string(entry->tid);
  reg.entries.push_back(std::move(entry));
  ThreadEntry* raw = reg.entries.back().get();
  t_entry = raw;
  detail::t_buffer = &raw->buffer;
  return raw;
}

void keep(ThreadEntry& entry, const Record& record, std::size_t keep_last) {
  ++entry.collected;
  if (keep_last == 0 || entry.kept.size() < keep_last) {
    entry.kept.push_back(record);
    return;
  }
  entry.kept[entry.kept_next] = record;
  entry.kept_next = (entry.kept_next + 1) % keep_last;
  ++entry.evicted;
}

// Called with the registry mutex held.
void drain_locked(Registry& reg) {
  for (const auto& entry : reg.entries) {
    detail::ThreadBuffer& buffer = entry->buffer;
    const std::uint64_t tail = buffer.tail.load(std::memory_order_relaxed);
    const std::uint64_t head = buffer.head.load(std::memory_order_acquire);
    for (std::uint64_t i = tail; i != head; ++i) {
      const Record& record = buffer.slots[i & buffer.mask];
      // A record older than the recording was written by a thread that passed the recording()
      // check just as the previous recording stopped: not part of this one.
      if (static_cast<std::int64_t>(record.ticks - reg.tick0) >= 0)
        keep(*entry, record, reg.options.keep_last);
    }
    buffer.tail.store(head, std::memory_order_release);
  }
}

RecordingStats stats_locked(const Registry& reg) {
  RecordingStats s;
  for (const auto& entry : reg.entries) {
    s.collected += entry->collected;
    s.evicted += entry->evicted;
    s.dropped += entry->buffer.dropped.load(std::memory_order_relaxed) - entry->dropped_at_start;
    if (entry->collected > 0) ++s.threads;
  }
  return s;
}

std::string process_name() {
  std::ifstream comm("/proc/self/comm");
  std::string name;
  std::getline(comm, name);
  return name.empty() ? std::string("process") : name;
}

Trace build_trace(Registry& reg, std::uint64_t tick1, std::int64_t steady1) {
  const long double ns_per_tick = tick1 > reg.tick0 ? static_cast<long double>(steady1 - reg.steady0) /
                                                          static_cast<long double>(tick1 - reg.tick0)
                                                    : 1.0L;
  Trace trace;
  trace.pid = static_cast<std::uint32_t>(::getpid());
  trace.process_name = process_name();
  std::unordered_map<const char*, std::uint32_t> by_pointer;
  for (const auto& entry : reg.entries) {
    const std::uint64_t dropped =
        entry->buffer.dropped.load(std::memory_order_relaxed) - entry->dropped_at_start;
    if (entry->collected == 0 && dropped == 0) continue;
    ThreadTrace thread;
    thread.tid = entry->tid;
    thread.name = entry->name;
    thread.dropped = dropped;
    thread.evicted = entry->evicted;
    std::rotate(entry->kept.begin(), entry->kept.begin() + static_cast<std::ptrdiff_t>(entry->kept_next),
                entry->kept.end());
    thread.events.reserve(entry->kept.size());
    for (const Record& record : entry->kept) {
      auto [it, inserted] = by_pointer.try_emplace(record.name, 0);
      if (inserted) it->second = trace.intern(record.name != nullptr ? record.name : "");
      TraceEvent event;
      event.ts_ns = static_cast<std::int64_t>(
          std::llround(static_cast<long double>(record.ticks - reg.tick0) * ns_per_tick));
      event.name = it->second;
      event.kind = static_cast<EventKind>(record.kind);
      event.value = record.value;
      thread.events.push_back(event);
    }
    entry->kept.clear();
    entry->kept.shrink_to_fit();
    entry->kept_next = 0;
    trace.threads.push_back(std::move(thread));
  }
  return trace;
}

void collector_loop(Registry* reg) {
  std::unique_lock wake_lock(reg->wake_mutex);
  while (!reg->stop_requested) {
    wake_lock.unlock();
    {
      const std::lock_guard lock(reg->mutex);
      drain_locked(*reg);
    }
    wake_lock.lock();
    // A system_clock deadline: libstdc++ waits for it with pthread_cond_timedwait. A steady one
    // goes through pthread_cond_clockwait, which GCC 12's ThreadSanitizer does not intercept (the
    // waits then never time out under TSan). A clock step only lengthens or shortens one pass.
    const auto deadline = std::chrono::system_clock::now() + reg->options.drain_interval;
    reg->wake.wait_until(wake_lock, deadline, [reg] { return reg->stop_requested; });
  }
}

}  // namespace

namespace detail {

ThreadBuffer* register_this_thread() noexcept {
  try {
    Registry& reg = registry();
    const std::lock_guard lock(reg.mutex);
    return &register_locked(reg)->buffer;
  } catch (...) {
    return nullptr;
  }
}

}  // namespace detail

void start(const RecordingOptions& options) {
  Registry& reg = registry();
  const std::lock_guard lock(reg.mutex);
  if (reg.running) throw Error("profile::start: a recording is already running");
  if (options.buffer_records < 2 || options.buffer_records > (std::size_t{1} << 30))
    throw Error("profile::start: buffer_records must be between 2 and 2^30, got " +
                std::to_string(options.buffer_records));
  reg.options = options;
  reg.buffer_records = std::bit_ceil(options.buffer_records);
  for (const auto& entry : reg.entries) {
    entry->buffer.tail.store(entry->buffer.head.load(std::memory_order_acquire), std::memory_order_release);
    entry->dropped_at_start = entry->buffer.dropped.load(std::memory_order_relaxed);
    entry->kept.clear();
    entry->kept_next = 0;
    entry->collected = 0;
    entry->evicted = 0;
  }
  reg.steady0 = steady_ns();
  reg.tick0 = detail::now_ticks();
  {
    const std::lock_guard wake_lock(reg.wake_mutex);
    reg.stop_requested = false;
  }
  reg.collector = std::thread(collector_loop, &reg);
  reg.running = true;
  detail::g_recording.store(true, std::memory_order_release);
}

Trace stop() {
  Registry& reg = registry();
  {
    const std::lock_guard lock(reg.mutex);
    if (!reg.running) throw Error("profile::stop: no recording is running");
  }
  detail::g_recording.store(false, std::memory_order_release);
  const std::uint64_t tick1 = detail::now_ticks();
  const std::int64_t steady1 = steady_ns();
  {
    const std::lock_guard wake_lock(reg.wake_mutex);
    reg.stop_requested = true;
  }
  reg.wake.notify_all();
  reg.collector.join();
  const std::lock_guard lock(reg.mutex);
  drain_locked(reg);
  reg.last = stats_locked(reg);
  reg.running = false;
  return build_trace(reg, tick1, steady1);
}

RecordingStats stats() {
  Registry& reg = registry();
  const std::lock_guard lock(reg.mutex);
  return reg.running ? stats_locked(reg) : reg.last;
}

void set_thread_name(std::string_view name) {
  Registry& reg = registry();
  const std::lock_guard lock(reg.mutex);
  ThreadEntry* entry = t_entry != nullptr ? t_entry : register_locked(reg);
  entry->name = std::string(name);
}

}  // namespace tfdebug::profile
