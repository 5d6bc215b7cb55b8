// The LibTorch op profiler (tfdebug/torch/profiler.hpp).
//
// Note [Profiler frames]
// RecordFunction start and end callbacks nest like a stack on each thread, so each thread keeps
// a stack of frames: the start pushes the op's start time, module, phase, input shapes and its
// own FLOPs (from the inputs, which are readable only at the start); the end pops it, adds its
// duration to the parent's child time (self = duration - children) and folds it into the
// thread's aggregate rows. Frames are reused: no op allocates once the stack, the rows and the
// caches have grown.
//
// Note [Leaf FLOPs]
// Composite ops call other ops (linear calls addmm, or matmul which calls mm; layer_norm calls
// native_layer_norm), so counting every op's formula would count the same arithmetic twice. An
// op's formula counts only when none of the ops it called counted FLOPs > 0; otherwise its
// callees' counts stand and it adds nothing. An op with no formula whose callees counted nothing
// is "uncounted" unless an op above it has a formula (which then covers it): such ops wait in a
// per-thread pending list until an enclosing op with a formula claims them or the outermost op
// ends, when they are listed in OpProfile::uncounted. Scopes that are not aten:: ops (the autograd
// engine's "autograd::engine::evaluate_function: ...") only wrap ops and are never listed.
//
// Note [Memory reports]
// c10's CPU allocator (ProfiledCPUMemoryReporter in LibTorch 1.13) reports an allocation to the
// MemoryReportingInfoBase found in the allocating thread's ThreadLocalDebugInfo under
// DebugInfoKind::PROFILER_STATE when its memoryProfilingEnabled() is true, and a free only when
// the allocation was made while reporting was on. So live bytes are those allocated since the
// profiler started and not yet freed; memory that existed before (the parameters) is not in it.
// The reporter is pushed on the constructing thread and popped by stop() on the same thread.
//
// Note [Step window]
// With ProfilerOptions::keep_steps_before > 0, each thread's ring also remembers where each step
// began in it (the ring's write count when step_begin ran; a thread first seen inside a step
// begins there at 0). step_begin runs on the training thread while no op runs elsewhere, so it
// sets every thread's boundary and recording flag itself. stop() keeps, per thread, the events
// from the first window step whose beginning is still in the ring up to the beginning of the
// first step after the window; everything else counts as evicted (discarded by the window, as
// with the zones' keep_last). After mark_anomaly(S), the first step_begin past S + keep_steps_after
// turns recording off on every thread, so the window's steps stay in the ring however long the run
// goes on. The anomaly's instant event is written to the ring of the thread that marked it, so it
// sits in time order among that thread's events.
#include "tfdebug/torch/profiler.hpp"

#include <ATen/core/Tensor.h>
#include <ATen/record_function.h>
#include <c10/core/Allocator.h>
#include <c10/util/ThreadLocalDebugInfo.h>
#include <malloc.h>
#include <sys/syscall.h>
#include <torch/csrc/autograd/graph_task.h>
#include <torch/nn/module.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "op_modules.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/profile/flops.hpp"

namespace tfdebug::torch {
namespace detail {
struct ProfilerState;
}  // namespace detail

namespace {

using profile::OpArg;

enum class Phase : std::uint8_t { forward, backward, optimizer };
constexpr std::array<const char*, 3> kPhaseNames = {"forward", "backward", "optimizer"};
constexpr std::size_t kMaxArgs = 16;

std::int64_t now_ns() {
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
  std::unordered_map<std::uint64_t, std::uint32_t> shape_ids;  // hash of the shapes -> name id
  std::uint64_t rows_overflowed = 0;
  std::uint64_t ops_seen = 0;
  // Phase and module of the thread's outermost frames, for the trace's phase/module slices.
  std::int64_t open_phase = -1;
  std::int64_t open_module = -1;
  std::uint64_t generation = 0;
  std::uint32_t last_module = 0;
  std::vector<std::uint32_t> nodes;  // modules of the backward nodes running
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

std::unique_ptr<at::ObserverContext> on_start(const at::RecordFunction& fn);
void on_end(const at::RecordFunction& fn, at::ObserverContext* context);

std::atomic<detail::ProfilerState*> g_profiler{nullptr};
std::atomic<std::uint64_t> g_generation{0};

}  // namespace

namespace detail {

struct ProfilerState {
  ProfilerOptions options;
  std::uint64_t generation = 0;
  std::int64_t origin = now_ns();
  std::optional<at::CallbackHandle> callback;
  StorageModules module_of_storage;
  std::unordered_map<std::uint32_t, std::uint32_t> parent_of;  // module id -> its parent's id

  // Interned strings: op names, module paths, shapes, phase names, trace names.
  std::mutex names_mutex;
  std::vector<std::string> names;
  std::map<std::string, std::uint32_t, std::less<>> name_ids;
  std::uint32_t intern(std::string_view s) {
    std::lock_guard<std::mutex> lock(names_mutex);
    auto it = name_ids.find(s);
    if (it != name_ids.end()) return it->second;
    names.emplace_back(s);
    const auto id = std::uint32_t(names.size() - 1);
    name_ids.emplace(std::string(s), id);
    return id;
  }
  std::string name(std::uint32_t id) {
    std::lock_guard<std::mutex> lock(names_mutex);
    return id < names.size() ? names[id] : std::string();
  }

  std::uint32_t empty_id = intern("");
  std::array<std::uint32_t, 3> phase_ids = {intern(kPhaseNames[0]), intern(kPhaseNames[1]),
                                            intern(kPhaseNames[2])};
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

  SequenceModules sequence_modules;  // Note [Module of an op] in attach.cpp

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

  ThreadData& thread();
  void on_memory(void* ptr, std::int64_t bytes);
  std::int64_t ts() const { return now_ns() - origin; }
};

}  // namespace detail

namespace {

thread_local ThreadData* tls_data = nullptr;
thread_local std::uint64_t tls_generation = 0;

std::uint32_t os_tid() {
  return std::uint32_t(::syscall(SYS_gettid));
}

std::int64_t rss_bytes() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return -1;
  long long size = 0;
  long long resident = 0;
  const int got = std::fscanf(f, "%lld %lld", &size, &resident);
  std::fclose(f);
  if (got != 2) return -1;
  return resident * ::sysconf(_SC_PAGESIZE);
}

class MemoryReporter : public c10::MemoryReportingInfoBase {
 public:
  explicit MemoryReporter(detail::ProfilerState* state) : state_(state) {}
  void reportMemoryUsage(void* ptr, int64_t alloc_size, int64_t /*total_allocated*/,
                         int64_t /*total_reserved*/, c10::Device device) override {
    if (device.is_cpu() && g_profiler.load(std::memory_order_acquire) == state_)
      state_->on_memory(ptr, alloc_size);
  }
  bool memoryProfilingEnabled() const override { return true; }

 private:
  detail::ProfilerState* state_;
};

}  // namespace

namespace detail {

ThreadData& ProfilerState::thread() {
  if (tls_generation == generation && tls_data != nullptr) return *tls_data;
  auto data = std::make_unique<ThreadData>();
  data->tid = os_tid();
  data->ring.resize(std::max<std::size_t>(1, options.trace_events));
  data->rows.reserve(256);
  std::lock_guard<std::mutex> lock(threads_mutex);
  data->name = threads.empty() ? "main" : "worker " + std::to_string(threads.size());
  if (window) {
    // Note [Step window]: a thread first seen inside a step holds that step from its start.
    data->recording = !frozen;
    if (last_begun >= 0 && !frozen) data->boundaries.emplace_back(last_begun, 0);
  }
  threads.push_back(std::move(data));
  tls_data = threads.back().get();
  tls_generation = generation;
  return *tls_data;
}

void ProfilerState::on_memory(void* ptr, std::int64_t bytes) {
  ThreadData& t = thread();
  std::uint32_t op = outside_id;
  std::uint32_t module = 0;
  Phase phase = Phase::forward;
  Frame* frame = nullptr;
  for (std::size_t i = t.depth; i > 0; --i) {
    if (!t.frames[i - 1].node) {
      frame = &t.frames[i - 1];
      break;
    }
  }
  if (frame != nullptr) {
    op = frame->op;
    module = frame->module;
    phase = frame->phase;
    if (bytes > 0) {
      frame->alloc_bytes += std::uint64_t(bytes);
      frame->allocations += 1;
    }
  }
  const auto ts_now = ts();
  std::int64_t live_now = 0;
  {
    std::lock_guard<std::mutex> lock(memory_mutex);
    if (bytes > 0) {
      memory.allocations += 1;
      memory.allocated_bytes += bytes;
      live_blocks[ptr] = LiveBlock{bytes, step.load(std::memory_order_relaxed), op, module};
    } else {
      memory.frees += 1;
      live_blocks.erase(ptr);
    }
    memory.reported = true;
    live += bytes;
    live_now = live;
    if (live > memory.peak_bytes) {
      memory.peak_bytes = live;
      memory.peak_ts_ns = ts_now;
      memory.peak_step = in_step.load(std::memory_order_relaxed) ? step.load(std::memory_order_relaxed) : -1;
      peak_op = op;
      peak_module = module;
      peak_phase = phase;
    }
    if (reports++ % timeline_stride == 0) {
      memory.timeline.push_back({ts_now, live});
      if (memory.timeline.size() >= std::max<std::size_t>(2, options.timeline_points)) {
        // Full: keep every other point and sample half as often from now on.
        std::size_t kept = 0;
        for (std::size_t i = 0; i < memory.timeline.size(); i += 2)
          memory.timeline[kept++] = memory.timeline[i];
        memory.timeline.resize(kept);
        timeline_stride *= 2;
      }
    }
  }
  t.emit(ts_now, live_id, profile::EventKind::kCounter, double(live_now));
}

}  // namespace detail

namespace {

bool inside_backward(const ThreadData& t) {
  return !t.nodes.empty() || ::torch::autograd::get_current_graph_task_nodes_in_graph() != nullptr;
}

// The op's tensor inputs' shapes as FLOP formula arguments; their hash identifies the shapes.
std::size_t capture_args(const at::RecordFunction& fn, std::array<OpArg, kMaxArgs>& args,
                         std::uint64_t& hash) {
  const auto inputs = fn.inputs();
  const std::size_t n = std::min(inputs.size(), kMaxArgs);
  hash = 1469598103934665603ULL;
  auto mix = [&hash](std::int64_t v) { hash = (hash ^ std::uint64_t(v)) * 1099511628211ULL; };
  for (std::size_t i = 0; i < n; ++i) {
    const auto& v = inputs[i];
    OpArg& a = args[i];
    a = OpArg{};
    if (v.isTensor()) {
      const auto& t = v.toTensor();
      if (!t.defined()) continue;
      const auto sizes = t.sizes();
      if (sizes.size() > OpArg::kMaxValues) {
        a.kind = OpArg::Kind::kOther;
        mix(-2);
        continue;
      }
      a.kind = OpArg::Kind::kTensor;
      a.size = std::uint8_t(sizes.size());
      mix(-1 - std::int64_t(sizes.size()) * 16);
      for (std::size_t d = 0; d < sizes.size(); ++d) {
        a.values[d] = sizes[d];
        mix(sizes[d]);
      }
    } else if (v.isIntList()) {
      const auto list = v.toIntList();
      if (list.size() > OpArg::kMaxValues) {
        a.kind = OpArg::Kind::kOther;
        continue;
      }
      a.kind = OpArg::Kind::kInts;
      a.size = std::uint8_t(list.size());
      for (std::size_t d = 0; d < list.size(); ++d) a.values[d] = list.get(d);
    } else if (v.isBoolList()) {
      const auto list = v.toBoolList();
      if (list.size() > OpArg::kMaxValues) {
        a.kind = OpArg::Kind::kOther;
        continue;
      }
      a.kind = OpArg::Kind::kInts;
      a.size = std::uint8_t(list.size());
      for (std::size_t d = 0; d < list.size(); ++d) a.values[d] = list.get(d) ? 1 : 0;
    } else if (v.isBool()) {
      a = OpArg::boolean(v.toBool());
    } else if (v.isInt()) {
      a = OpArg::integer(v.toInt());
    } else if (v.isDouble()) {
      a.kind = OpArg::Kind::kDouble;
      a.real = v.toDouble();
    } else if (v.isString()) {
      a = OpArg::string(v.toStringRef());
    } else if (!v.isNone()) {
      a.kind = OpArg::Kind::kOther;
    }
  }
  return n;
}

std::string shapes_text(std::span<const OpArg> args) {
  std::string out;
  for (const auto& a : args) {
    if (a.kind != OpArg::Kind::kTensor) continue;
    if (!out.empty()) out += ", ";
    out += '[';
    for (std::size_t d = 0; d < a.size; ++d) {
      if (d) out += ", ";
      out += std::to_string(a.values[d]);
    }
    out += ']';
  }
  return out;
}

// The trace's phase and module slices around the thread's outermost frames.
void open_slices(detail::ProfilerState& s, ThreadData& t, Phase phase, std::uint32_t module,
                 std::int64_t ts) {
  const auto phase_id = std::int64_t(s.phase_ids[std::size_t(phase)]);
  const std::int64_t module_id = module == s.empty_id ? -1 : std::int64_t(module);
  if (t.open_phase == phase_id && t.open_module == module_id) return;
  if (t.open_module >= 0) t.emit(ts, std::uint32_t(t.open_module), profile::EventKind::kEnd);
  t.open_module = -1;
  if (t.open_phase != phase_id) {
    if (t.open_phase >= 0) t.emit(ts, std::uint32_t(t.open_phase), profile::EventKind::kEnd);
    t.emit(ts, std::uint32_t(phase_id), profile::EventKind::kBegin);
    t.open_phase = phase_id;
  }
  if (module_id >= 0) {
    t.emit(ts, std::uint32_t(module_id), profile::EventKind::kBegin);
    t.open_module = module_id;
  }
}

void close_slices(ThreadData& t, std::int64_t ts) {
  if (t.open_module >= 0) t.emit(ts, std::uint32_t(t.open_module), profile::EventKind::kEnd);
  if (t.open_phase >= 0) t.emit(ts, std::uint32_t(t.open_phase), profile::EventKind::kEnd);
  t.open_module = -1;
  t.open_phase = -1;
}

std::uint32_t op_id(detail::ProfilerState& s, ThreadData& t, const char* name) {
  auto it = t.op_ids.find(name);
  if (it == t.op_ids.end()) it = t.op_ids.emplace(name, s.intern(name)).first;
  return it->second;
}

std::unique_ptr<at::ObserverContext> on_start(const at::RecordFunction& fn) {
  detail::ProfilerState* s = g_profiler.load(std::memory_order_acquire);
  if (s == nullptr) return nullptr;
  try {
    ThreadData& t = s->thread();
    const bool outermost = t.depth == 0;
    Frame& f = t.push();
    f.active = s->in_step.load(std::memory_order_relaxed);
    f.pending_mark = t.pending.size();
    const auto generation = s->step_generation.load(std::memory_order_relaxed);
    if (t.generation != generation) {
      t.generation = generation;
      t.last_module = 0;
    }
    f.op = op_id(*s, t, fn.name());
    if (fn.scope() == at::RecordScope::BACKWARD_FUNCTION) {
      f.node = true;
      f.phase = Phase::backward;
      f.module = s->sequence_modules.module_of(fn.seqNr());
      if (f.module == 0) f.module = s->empty_id;
      t.nodes.push_back(f.module);
      if (f.active && !s->backward_seen.load(std::memory_order_relaxed)) s->backward_seen.store(true);
    } else {
      ++t.ops_seen;
      f.aten = std::string_view(fn.name()).substr(0, 6) == "aten::";
      std::array<OpArg, kMaxArgs> args;
      std::uint64_t hash = 0;
      const std::size_t n = capture_args(fn, args, hash);
      const std::span<const OpArg> used(args.data(), n);
      auto flops = profile::op_flops(fn.name(), used);
      f.has_flops = flops.has_value();
      f.flops = flops.value_or(0);
      auto shape_it = t.shape_ids.find(hash);
      if (shape_it == t.shape_ids.end())
        shape_it = t.shape_ids.emplace(hash, s->intern(shapes_text(used))).first;
      f.shapes = shape_it->second;
      if (inside_backward(t)) {
        f.phase = Phase::backward;
        f.module = t.nodes.empty() ? s->empty_id : t.nodes.back();
      } else {
        const auto parameter_module = detail::module_of_inputs(s->module_of_storage, fn.inputs());
        if (s->backward_seen.load(std::memory_order_relaxed) && f.active) {
          f.phase = Phase::optimizer;
          f.module = parameter_module != 0 ? parameter_module : s->empty_id;
        } else {
          // Note [Module of a forward op]: a parameter's module; else the enclosing op's; else the
          // parent of the last module whose parameters were read (the code between layers runs in
          // their parent's forward: the attention scores after attn.k run in attn).
          f.phase = Phase::forward;
          const Frame* enclosing = t.depth >= 2 ? &t.frames[t.depth - 2] : nullptr;
          if (parameter_module != 0) {
            t.last_module = parameter_module;
            f.module = parameter_module;
          } else if (enclosing != nullptr && !enclosing->node) {
            f.module = enclosing->module;
          } else if (t.last_module != 0) {
            auto parent = s->parent_of.find(t.last_module);
            f.module = parent != s->parent_of.end() ? parent->second : s->empty_id;
          } else {
            f.module = s->empty_id;
          }
          s->sequence_modules.remember(fn.seqNr(), f.module);
        }
      }
    }
    f.start = s->ts();
    if (f.active) {
      if (outermost) open_slices(*s, t, f.phase, f.module, f.start);
      t.emit(f.start, f.op, profile::EventKind::kBegin);
    }
  } catch (...) {
    // Nothing throws into the training loop; a frame that failed half-way still pops.
  }
  return nullptr;
}

void flush_pending(ThreadData& t) {
  for (const auto& p : t.pending) {
    auto& u = t.uncounted[p.op];
    u.calls += 1;
    u.self_ns += p.self_ns;
  }
  t.pending.clear();
}

void on_end(const at::RecordFunction& /*fn*/, at::ObserverContext* /*context*/) {
  detail::ProfilerState* s = g_profiler.load(std::memory_order_acquire);
  if (s == nullptr) return;
  try {
    ThreadData& t = s->thread();
    if (t.depth == 0) return;
    Frame& f = t.frames[--t.depth];
    const auto end = s->ts();
    const auto duration = end - f.start;
    Frame* parent = t.depth > 0 ? &t.frames[t.depth - 1] : nullptr;
    if (parent != nullptr) parent->child_ns += duration;
    if (f.node) {
      if (!t.nodes.empty()) t.nodes.pop_back();
      if (f.active) t.emit(end, f.op, profile::EventKind::kEnd);
      flush_pending(t);
      return;
    }
    if (!f.active) {
      t.pending.resize(std::min(t.pending.size(), f.pending_mark));
      return;
    }
    t.emit(end, f.op, profile::EventKind::kEnd);
    const auto self = duration - f.child_ns;
    // Note [Leaf FLOPs]
    double counted = 0;
    if (f.child_counted) {
      t.pending.resize(std::min(t.pending.size(), f.pending_mark));
    } else if (f.has_flops) {
      counted = f.flops;
      t.pending.resize(std::min(t.pending.size(), f.pending_mark));
    } else if (f.aten) {
      t.pending.push_back({f.op, self});
    }
    if (parent != nullptr && (f.child_counted || counted > 0)) parent->child_counted = true;
    RowKey key{f.op, f.module, f.shapes, f.phase};
    auto it = t.rows.find(key);
    if (it == t.rows.end()) {
      if (t.rows.size() >= s->options.max_rows) {
        key = RowKey{s->other_id, s->empty_id, s->empty_id, f.phase};
        ++t.rows_overflowed;
      }
      it = t.rows.try_emplace(key).first;
    }
    Row& row = it->second;
    row.calls += 1;
    row.self_ns += self;
    row.total_ns += duration;
    row.flops += counted;
    row.formula = row.formula || f.has_flops;
    row.alloc_bytes += f.alloc_bytes;
    row.allocations += f.allocations;
    const auto step = std::uint64_t(s->step.load(std::memory_order_relaxed));
    if (f.aten) t.series[(step << 20) | (f.op & 0xFFFFFU)] += self;
    if (parent == nullptr) flush_pending(t);
  } catch (...) {
  }
}

}  // namespace

// ---- Profiler ----------------------------------------------------------------------------------

Profiler::Profiler(::torch::nn::Module& module, const ProfilerOptions& options)
    : state_(std::make_unique<detail::ProfilerState>()) {
  auto& s = *state_;
  s.options = options;
  if (options.keep_steps_before < 0 || options.keep_steps_after < 0)
    throw Error("tfdebug::torch::Profiler: keep_steps_before and keep_steps_after must be >= 0");
  if (options.keep_steps_after > 0 && options.keep_steps_before == 0)
    throw Error("tfdebug::torch::Profiler: keep_steps_after needs keep_steps_before > 0 (the step window)");
  s.window = options.keep_steps_before > 0;
  s.step_name = s.step_id;
  s.generation = g_generation.fetch_add(1) + 1;
  for (const auto& named : module.named_modules(/*name_prefix=*/"", /*include_self=*/true)) {
    const auto id = s.intern(named.key());
    const auto dot = named.key().rfind('.');
    s.parent_of[id] = s.intern(dot == std::string::npos ? std::string() : named.key().substr(0, dot));
    for (const auto& parameter : named.value()->named_parameters(/*recurse=*/false)) {
      const auto& tensor = parameter.value();
      if (tensor.defined() && tensor.has_storage()) s.module_of_storage.emplace(tensor.storage().data(), id);
    }
  }
  detail::ProfilerState* expected = nullptr;
  if (!g_profiler.compare_exchange_strong(expected, state_.get())) {
    state_.reset();
    throw Error("tfdebug::torch::Profiler: another Profiler is running in this process; stop it first");
  }
  s.owner = &s.thread();
  if (options.memory) {
    s.reporter = std::make_shared<MemoryReporter>(&s);
    c10::ThreadLocalDebugInfo::_push(c10::DebugInfoKind::PROFILER_STATE, s.reporter);
  }
  s.callback =
      at::addGlobalCallback(at::RecordFunctionCallback(&on_start, &on_end)
                                .needsInputs(true)
                                .scopes({at::RecordScope::FUNCTION, at::RecordScope::BACKWARD_FUNCTION}));
}

Profiler::~Profiler() {
  if (state_) {
    try {
      (void)stop();
    } catch (...) {
    }
  }
}

void Profiler::step_begin(std::int64_t step) {
  if (!state_) throw Error("tfdebug::torch::Profiler: step_begin after stop");
  auto& s = *state_;
  s.step.store(step);
  s.backward_seen.store(false);
  s.step_generation.fetch_add(1);
  if (s.window) {
    // Note [Step window]
    bool record = true;
    {
      std::lock_guard<std::mutex> lock(s.anomaly_mutex);
      if (s.anomaly_step >= 0 && step > s.anomaly_step + s.options.keep_steps_after) record = false;
    }
    s.step_name = s.intern("step " + std::to_string(step));
    std::lock_guard<std::mutex> lock(s.threads_mutex);
    s.frozen = !record;
    s.last_begun = step;
    for (auto& t : s.threads) {
      t->recording = record;
      if (!record) continue;
      t->boundaries.emplace_back(step, t->written);
      while (t->boundaries.size() > s.max_boundaries()) t->boundaries.pop_front();
    }
  }
  s.step_start = s.ts();
  s.owner->emit(s.step_start, s.step_name, profile::EventKind::kBegin);
  s.in_step.store(true);
}

void Profiler::step_end(std::int64_t step) {
  if (!state_) throw Error("tfdebug::torch::Profiler: step_end after stop");
  auto& s = *state_;
  s.in_step.store(false);
  const auto end = s.ts();
  s.step_ns.push_back(end - s.step_start);
  {
    std::lock_guard<std::mutex> lock(s.threads_mutex);
    for (auto& t : s.threads) close_slices(*t, end);
  }
  s.owner->emit(end, s.step_name, profile::EventKind::kEnd);
  if (s.options.memory) {
    const auto rss = rss_bytes();
    s.owner->emit(end, s.rss_id, profile::EventKind::kCounter, double(rss));
    std::map<std::pair<std::uint32_t, std::uint32_t>, profile::AliveAllocation> alive;
    std::lock_guard<std::mutex> lock(s.memory_mutex);
    s.memory.rss_bytes.push_back(rss);
    for (const auto& [ptr, block] : s.live_blocks) {
      if (block.step != step) continue;
      auto& a = alive[{block.op, block.module}];
      a.step = step;
      a.count += 1;
      a.bytes += block.bytes;
      if (a.op.empty()) {
        a.op = s.names[block.op];
        a.module = s.names[block.module];
      }
    }
    for (auto& [key, a] : alive) s.memory.alive_at_step_end.push_back(std::move(a));
  }
}

bool Profiler::mark_anomaly(std::int64_t step, const std::string& what) {
  if (!state_ || !state_->window) return false;
  auto& s = *state_;
  {
    std::lock_guard<std::mutex> lock(s.anomaly_mutex);
    if (s.anomaly_step >= 0) return false;
    s.anomaly_step = std::max<std::int64_t>(step, 0);
    s.anomaly = what;
  }
  const auto name = s.intern("tfdebug: " + what);
  s.thread().emit(s.ts(), name, profile::EventKind::kInstant);
  return true;
}

namespace {

// Note [Step window]: the part [begin, end) of a thread's written events that the window keeps,
// and the first and last step in it (-1 when none).
struct Kept {
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
  std::int64_t first_step = -1;
  std::int64_t last_step = -1;
};

Kept window_part(const ThreadData& t, std::int64_t first, std::int64_t last) {
  Kept k;
  const std::uint64_t oldest = t.written - std::min<std::uint64_t>(t.written, t.ring.size());
  for (std::size_t i = 0; i < t.boundaries.size(); ++i) {
    const auto [step, index] = t.boundaries[i];
    const std::uint64_t next = i + 1 < t.boundaries.size() ? t.boundaries[i + 1].second : t.written;
    if (step < first || step > last || index < oldest) continue;  // outside, or no longer whole
    if (k.first_step < 0) {
      k.first_step = step;
      k.begin = index;
    }
    k.last_step = step;
    k.end = next;
  }
  return k;
}

}  // namespace

profile::OpProfile Profiler::stop() {
  if (!state_) throw Error("tfdebug::torch::Profiler: stop called twice");
  auto& s = *state_;
  at::removeCallback(*s.callback);
  if (s.reporter) {
    try {
      c10::ThreadLocalDebugInfo::_pop(c10::DebugInfoKind::PROFILER_STATE);
    } catch (const std::exception&) {
      // Another PROFILER_STATE was pushed after ours and is still there: leave it.
    }
  }
  g_profiler.store(nullptr, std::memory_order_release);
  profile::OpProfile out;
  out.step_ns = s.step_ns;
  out.samples_per_step = s.options.samples_per_step;
  out.tokens_per_step = s.options.tokens_per_step;
  // Merge the threads' rows (same key across threads: one row).
  std::unordered_map<RowKey, Row, RowKeyHash> rows;
  std::map<std::uint64_t, std::int64_t> series;
  std::unordered_map<std::uint32_t, Uncounted> uncounted;
  std::int64_t max_step = -1;
  std::int64_t min_step = -1;
  for (auto& t : s.threads) {
    out.ops_seen += t->ops_seen;
    out.rows_overflowed += t->rows_overflowed;
    for (const auto& [key, row] : t->rows) {
      Row& r = rows[key];
      r.calls += row.calls;
      r.self_ns += row.self_ns;
      r.total_ns += row.total_ns;
      r.flops += row.flops;
      r.formula = r.formula || row.formula;
      r.alloc_bytes += row.alloc_bytes;
      r.allocations += row.allocations;
    }
    for (const auto& [key, ns] : t->series) {
      series[key] += ns;
      const auto step = std::int64_t(key >> 20);
      max_step = std::max(max_step, step);
      min_step = min_step < 0 ? step : std::min(min_step, step);
    }
    for (const auto& [op, u] : t->uncounted) {
      auto& m = uncounted[op];
      m.calls += u.calls;
      m.self_ns += u.self_ns;
    }
  }
  for (const auto& [key, row] : rows) {
    profile::OpStats o;
    o.op = s.names[key.op];
    o.module = s.names[key.module];
    o.phase = kPhaseNames[std::size_t(key.phase)];
    o.shapes = s.names[key.shapes];
    o.calls = row.calls;
    o.self_ns = row.self_ns;
    o.total_ns = row.total_ns;
    o.flops = row.flops;
    o.formula = row.formula;
    o.alloc_bytes = row.alloc_bytes;
    o.allocations = row.allocations;
    out.ops.push_back(std::move(o));
  }
  std::sort(out.ops.begin(), out.ops.end(), [](const profile::OpStats& a, const profile::OpStats& b) {
    return a.self_ns != b.self_ns
               ? a.self_ns > b.self_ns
               : std::tie(a.op, a.module, a.phase, a.shapes) < std::tie(b.op, b.module, b.phase, b.shapes);
  });
  out.modules = profile::module_totals(out.ops);
  for (const auto& [op, u] : uncounted) out.uncounted.push_back({s.names[op], u.calls, u.self_ns});
  std::sort(
      out.uncounted.begin(), out.uncounted.end(),
      [](const profile::UncountedOp& a, const profile::UncountedOp& b) { return a.self_ns > b.self_ns; });
  // Per-op self time per step: every op gets a value for every profiled step (0 where absent).
  std::map<std::uint32_t, std::size_t> series_index;
  const std::size_t steps = out.step_ns.size();
  for (const auto& [key, ns] : series) {
    const auto op = std::uint32_t(key & 0xFFFFFU);
    auto [it, added] = series_index.emplace(op, out.series.size());
    if (added) out.series.push_back({s.names[op], std::vector<double>(steps, 0.0)});
    const auto index = std::size_t(std::int64_t(key >> 20) - min_step);
    if (index < steps) out.series[it->second].step_self_ns[index] += double(ns);
  }
  // Memory.
  {
    std::lock_guard<std::mutex> lock(s.memory_mutex);
    out.memory = std::move(s.memory);
    out.memory.end_bytes = s.live;
    out.memory.peak_op = s.names[s.peak_op];
    out.memory.peak_module = s.names[s.peak_module];
    out.memory.peak_phase = kPhaseNames[std::size_t(s.peak_phase)];
    std::stable_sort(out.memory.alive_at_step_end.begin(), out.memory.alive_at_step_end.end(),
                     [](const profile::AliveAllocation& a, const profile::AliveAllocation& b) {
                       return a.bytes > b.bytes;
                     });
  }
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
  if (s.options.memory) {
    const struct mallinfo2 info = ::mallinfo2();
    out.memory.malloc_in_use_bytes = std::int64_t(info.uordblks);
    out.memory.malloc_mmap_bytes = std::int64_t(info.hblkhd);
  }
#endif
  // The trace: each thread's ring, oldest first (Note [Step window]: the window's part of it).
  auto& trace = out.trace;
  trace.pid = std::uint32_t(::getpid());
  trace.process_name = "tfdebug torch profile";
  std::int64_t first = 0;
  std::int64_t last = -1;
  if (s.window) {
    out.window.enabled = true;
    out.window.anomaly_step = s.anomaly_step;
    out.window.anomaly = s.anomaly;
    if (s.anomaly_step >= 0) {
      first = s.anomaly_step - s.options.keep_steps_before;
      last = s.anomaly_step + s.options.keep_steps_after;
    } else {
      first = s.last_begun - s.options.keep_steps_before + 1;
      last = s.last_begun;
    }
  }
  std::vector<std::uint32_t> trace_name(s.names.size(), ~0U);
  for (auto& t : s.threads) {
    profile::ThreadTrace thread;
    thread.tid = t->tid;
    thread.name = t->name;
    const std::size_t capacity = t->ring.size();
    std::uint64_t begin = t->written - std::min<std::uint64_t>(t->written, capacity);
    std::uint64_t end = t->written;
    if (s.window) {
      const Kept kept = window_part(*t, first, last);
      begin = kept.begin;
      end = kept.end;
      if (t.get() == s.owner) {
        out.window.first_step = kept.first_step;
        out.window.last_step = kept.last_step;
      }
    }
    thread.evicted = t->written - (end - begin);
    out.trace_evicted += thread.evicted;
    thread.events.reserve(end - begin);
    for (std::uint64_t i = begin; i < end; ++i) {
      const Event& e = t->ring[i % capacity];
      if (trace_name[e.name] == ~0U) trace_name[e.name] = trace.intern(s.names[e.name]);
      thread.events.push_back({e.ts, trace_name[e.name], e.kind, e.value});
    }
    if (!thread.events.empty()) trace.threads.push_back(std::move(thread));
  }
  if (out.window.enabled && out.window.first_step >= 0) {
    trace.process_name +=
        ": steps " + std::to_string(out.window.first_step) + "-" + std::to_string(out.window.last_step);
    if (out.window.anomaly_step >= 0)
      trace.process_name +=
          " around step " + std::to_string(out.window.anomaly_step) + " (" + out.window.anomaly + ")";
  }
  state_.reset();
  return out;
}

}  // namespace tfdebug::torch
