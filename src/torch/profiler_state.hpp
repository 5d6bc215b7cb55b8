// The op profiler's state (tfdebug/torch/profiler.hpp): per profiler, its options, names,
// memory and threads; per thread, its frame stack, aggregate rows and trace ring. Private to
// tfdebug::torch; shared by profiler.cpp (the RecordFunction callbacks and the step markers),
// profiler_memory.cpp (the allocator's reports) and profiler_report.cpp (stop: the OpProfile).
#pragma once

#include <ATen/record_function.h>
#include <c10/util/ThreadLocalDebugInfo.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "module_attribution.hpp"
#include "tfdebug/core/interner.hpp"
#include "tfdebug/core/phase.hpp"
#include "tfdebug/profile/op_profile.hpp"
#include "tfdebug/profile/trace.hpp"
#include "tfdebug/torch/profiler.hpp"

namespace tfdebug::torch::detail {

constexpr std::size_t kMaxArgs = 16;

inline std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

struct RowKey {
  std::uint32_t op = 0;
  std::uint32_t module = 0;
  std::uint32_t shapes = 0;
  Phase phase = Phase::forward;
  bool operator==(const RowKey& o) const {
    return op == o.op && module == o.module && shapes == o.shapes && phase == o.phase;
  }
};
struct RowKeyHash {
  std::size_t operator()(const RowKey& k) const noexcept {
    std::uint64_t h = k.op;
    h = h * 0x9E3779B97F4A7C15ULL + k.module;
    h = h * 0x9E3779B97F4A7C15ULL + k.shapes;
    h = h * 0x9E3779B97F4A7C15ULL + std::uint64_t(k.phase);
    return std::size_t(h ^ (h >> 29));
  }
};

struct Row {
  std::uint64_t calls = 0;
  std::int64_t self_ns = 0;
  std::int64_t total_ns = 0;
  double flops = 0;
  bool formula = false;
  std::uint64_t alloc_bytes = 0;
  std::uint64_t allocations = 0;
};

struct Event {
  std::int64_t ts = 0;
  double value = 0;
  std::uint32_t name = 0;
  profile::EventKind kind = profile::EventKind::kInstant;
};

struct Frame {
  bool node = false;    // a backward node's scope, not an op
  bool active = false;  // inside a step: counted
  bool has_flops = false;
  bool child_counted = false;  // Note [Leaf FLOPs]
  bool aten = false;           // an aten:: op; other names (the autograd engine's scopes) only wrap ops
  Phase phase = Phase::forward;
  std::uint32_t op = 0;
  std::uint32_t module = 0;
  std::uint32_t shapes = 0;
  bool view = false;                          // only returns views of its inputs (Note [Module of an op])
  std::uint64_t first_sequence = UINT64_MAX;  // forward ops: at::sequence_number::peek() when it began
  std::int64_t start = 0;
  std::int64_t child_ns = 0;
  double flops = 0;
  std::size_t pending_mark = 0;
  std::uint64_t alloc_bytes = 0;
  std::uint64_t allocations = 0;
};

struct Pending {
  std::uint32_t op = 0;
  std::int64_t self_ns = 0;
};

struct Uncounted {
  std::uint64_t calls = 0;
  std::int64_t self_ns = 0;
};

struct ThreadData {
  std::uint32_t tid = 0;
  std::string name;
  std::vector<Frame> frames = std::vector<Frame>(32);
  std::size_t depth = 0;
  std::unordered_map<RowKey, Row, RowKeyHash> rows;
  std::unordered_map<std::uint64_t, std::int64_t> series;  // (step << 20 | op) -> self ns
  std::unordered_map<std::uint32_t, Uncounted> uncounted;
  std::vector<Pending> pending;
  std::unordered_map<const char*, std::uint32_t> op_ids;
  std::unordered_map<const char*, bool> views;  // by op name: returns only views (or changes metadata)
  std::unordered_map<std::uint64_t, std::uint32_t> shape_ids;  // hash of the shapes -> name id
  std::uint64_t rows_overflowed = 0;
  std::uint64_t ops_seen = 0;
  // Phase and module of the thread's outermost frames, for the trace's phase/module slices.
  std::int64_t open_phase = -1;
  std::int64_t open_module = -1;
  std::uint64_t generation = 0;
  std::uint32_t last_module = 0;
  std::uint32_t last_backward_module = 0;  // the module of the last backward node on this thread
  // Note [A custom function's node]: the autograd sequence number after the thread's last
  // forward op this step (UINT64_MAX: none yet).
  std::uint64_t sequence_end = UINT64_MAX;
  std::vector<std::uint32_t> nodes;  // modules of the backward nodes running
  // The innermost Scope's id in module_paths() and in this profiler's names (a cache).
  std::uint32_t scope_path = 0;
  std::uint32_t scope_name = 0;
  // The trace ring: the last `ring.size()` events.
  std::vector<Event> ring;
  std::uint64_t written = 0;
  // Note [Step window]: where each of the last steps began in the ring (step, write count).
  bool recording = true;
  std::deque<std::pair<std::int64_t, std::uint64_t>> boundaries;

  Frame& push() {
    if (depth == frames.size()) frames.resize(frames.size() * 2);
    Frame& f = frames[depth++];
    f = Frame{};
    return f;
  }
  void emit(std::int64_t ts, std::uint32_t name_id, profile::EventKind kind, double value = 0) {
    if (ring.empty() || !recording) return;
    ring[written % ring.size()] = Event{ts, value, name_id, kind};
    ++written;
  }
};

struct LiveBlock {
  std::int64_t bytes = 0;
  std::int64_t step = 0;
  std::uint32_t op = 0;
  std::uint32_t module = 0;
};

struct ProfilerState {
  ProfilerOptions options;
  std::uint64_t generation = 0;
  std::int64_t origin = now_ns();
  std::optional<at::CallbackHandle> callback;
  // Interned strings: op names, module paths, shapes, phase names, trace names (id 0 is "", the
  // top level). Module ids are this profiler's own, so ModuleTree and SequenceModules are too.
  Interner names{1U << 22};
  std::uint32_t intern(std::string_view s) { return names.intern(s); }
  std::string name(std::uint32_t id) const { return std::string(names.name(id)); }
  StorageModules module_of_storage;  // Note [Module of an op]
  ModuleTree modules;

  std::uint32_t empty_id = 0;
  std::array<std::uint32_t, 3> phase_ids = {intern(phase_name(Phase::forward)),
                                            intern(phase_name(Phase::backward)),
                                            intern(phase_name(Phase::optimizer))};
  std::uint32_t step_id = intern("step");
  std::uint32_t other_id = intern("(other)");
  std::uint32_t outside_id = intern("(outside ops)");
  std::uint32_t live_id = intern("live bytes (c10 CPU allocator)");
  std::uint32_t rss_id = intern("RSS bytes");

  std::mutex threads_mutex;
  std::vector<std::unique_ptr<ThreadData>> threads;

  std::atomic<bool> in_step{false};
  std::atomic<std::int64_t> step{0};
  std::atomic<bool> backward_seen{false};
  std::atomic<std::uint64_t> step_generation{1};
  std::int64_t step_start = 0;
  std::vector<std::int64_t> step_ns;
  ThreadData* owner = nullptr;  // the constructing thread

  // Note [Step window]
  bool window = false;
  std::int64_t last_begun = -1;  // the latest step_begin's step (-1: none yet)
  bool frozen = false;           // past the anomaly's window: no more trace events
  std::uint32_t step_name = 0;   // the running step's slice name ("step" or "step <n>")
  std::mutex anomaly_mutex;
  std::int64_t anomaly_step = -1;
  std::string anomaly;
  std::size_t max_boundaries() const {
    return std::size_t(options.keep_steps_before + options.keep_steps_after) + 3;
  }

  SequenceModules sequence_modules;  // Note [Module of an op]

  // Memory (Note [Memory reports]).
  std::mutex memory_mutex;
  std::unordered_map<const void*, LiveBlock> live_blocks;
  profile::MemoryProfile memory;
  std::int64_t live = 0;
  std::uint32_t peak_op = 0;
  std::uint32_t peak_module = 0;
  Phase peak_phase = Phase::forward;
  std::int64_t timeline_stride = 1;  // keep every stride-th report
  std::int64_t reports = 0;
  std::shared_ptr<c10::DebugInfoBase> reporter;
  std::shared_ptr<c10::ThreadLocalDebugInfo> previous_debug_info;

  // Nothing throws into the training loop: a callback that failed counts here (OpProfile::failures).
  std::atomic<std::uint64_t> failures{0};
  void record_failure() noexcept;

  ThreadData& thread();
  void on_memory(void* ptr, std::int64_t bytes);
  std::int64_t ts() const { return now_ns() - origin; }
};

// The running profiler of the process, or nullptr; and how many have been made.
std::atomic<ProfilerState*>& live_profiler();
std::atomic<std::uint64_t>& profiler_generation();

// Ends the thread's open phase and module slices at `ts` (the step markers).
void close_slices(ThreadData& t, std::int64_t ts);

// Note [Memory reports] (profiler_memory.cpp): the allocator's reporter, and the RSS.
std::shared_ptr<c10::DebugInfoBase> make_memory_reporter(ProfilerState* state);
std::int64_t rss_bytes();

}  // namespace tfdebug::torch::detail
