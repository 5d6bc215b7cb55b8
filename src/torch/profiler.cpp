// The LibTorch op profiler (tfdebug/torch/profiler.hpp): the RecordFunction callbacks and the
// step markers. Memory: profiler_memory.cpp; what stop() makes of it: profiler_report.cpp.
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
#include "tfdebug/torch/profiler.hpp"

#include <ATen/SequenceNumber.h>
#include <ATen/core/Tensor.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/record_function.h>
#include <c10/core/GradMode.h>
#include <sys/syscall.h>
#include <torch/csrc/autograd/graph_task.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <span>
#include <string>
#include <string_view>

#include "current_node.hpp"
#include "op_info.hpp"
#include "profiler_state.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/profile/flops.hpp"

namespace tfdebug::torch {

namespace detail {

std::atomic<ProfilerState*>& live_profiler() {
  static std::atomic<ProfilerState*> state{nullptr};
  return state;
}

std::atomic<std::uint64_t>& profiler_generation() {
  static std::atomic<std::uint64_t> generation{0};
  return generation;
}

void ProfilerState::record_failure() noexcept {
  failures.fetch_add(1, std::memory_order_relaxed);
}

namespace {

using profile::OpArg;

thread_local ThreadData* tls_data = nullptr;
thread_local std::uint64_t tls_generation = 0;

std::uint32_t os_tid() {
  return std::uint32_t(::syscall(SYS_gettid));
}

}  // namespace

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
void open_slices(ProfilerState& s, ThreadData& t, Phase phase, std::uint32_t module, std::int64_t ts) {
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

}  // namespace

void close_slices(ThreadData& t, std::int64_t ts) {
  if (t.open_module >= 0) t.emit(ts, std::uint32_t(t.open_module), profile::EventKind::kEnd);
  if (t.open_phase >= 0) t.emit(ts, std::uint32_t(t.open_phase), profile::EventKind::kEnd);
  t.open_module = -1;
  t.open_phase = -1;
}

namespace {

// The innermost tfdebug::torch::Scope's id in this profiler's names (0: none).
std::uint32_t scope_name(ProfilerState& s, ThreadData& t) {
  const std::uint32_t path = current_scope_id();
  if (path != t.scope_path) {
    t.scope_path = path;
    t.scope_name = path == 0 ? 0 : s.intern(current_scope());
  }
  return t.scope_name;
}

// Whether the op only returns views of its inputs or changes a tensor's metadata: the adapter lets
// those pass without a module (Note [Views pass through]), so its autograd nodes take the module of
// the op before (backward_module), here as there.
bool is_view(ThreadData& t, const at::RecordFunction& fn) {
  const auto cached = t.views.find(fn.name());
  if (cached != t.views.end()) return cached->second;
  bool view = false;
  if (const auto schema = fn.operator_schema()) {
    view = detail::describe_op(*schema).views_only || schema->name() == "aten::zero_";
    if (!view) {
      const auto op = c10::Dispatcher::singleton().findOp(schema->operator_name());
      view = op && op->hasTag(at::Tag::inplace_view);
    }
  }
  t.views.emplace(fn.name(), view);
  return view;
}

// Note [Op names by address]
// An op's name is its schema's, at one address for the process, so ids are cached by the name's
// pointer. Other records name themselves with strings that die with the record: the autograd
// engine's "autograd::engine::evaluate_function: MmBackward0" and each node's own name. A later
// record's name may reuse the address, so a hit counts only when the text is the same; otherwise
// nodes of the second step took the names of the first step's (LogSoftmaxBackward0 where
// NativeBatchNormBackward0 ran), and the flame graph drew them in the wrong modules.
std::uint32_t op_id(ProfilerState& s, ThreadData& t, const char* name) {
  auto it = t.op_ids.find(name);
  if (it == t.op_ids.end()) return t.op_ids.emplace(name, s.intern(name)).first->second;
  if (s.names.name(it->second) != std::string_view(name)) it->second = s.intern(name);
  return it->second;
}

std::unique_ptr<at::ObserverContext> on_start(const at::RecordFunction& fn) {
  ProfilerState* s = live_profiler().load(std::memory_order_acquire);
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
      t.last_backward_module = 0;
      t.sequence_end = UINT64_MAX;
    }
    f.op = op_id(*s, t, fn.name());
    if (fn.scope() == at::RecordScope::BACKWARD_FUNCTION) {
      f.node = true;
      f.phase = Phase::backward;
      f.module = backward_module(s->sequence_modules, fn.seqNr());
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
        // Note [Module of an op]: the node the engine evaluates (Note [Current node]), as the
        // adapter decides: also for the engine's own ops outside the node's range (summing a
        // broadcast gradient, adding two gradients of one input); between nodes, the last one's.
        f.phase = Phase::backward;
        if (const ::torch::autograd::Node* node = current_node()) {
          f.module = backward_module(s->sequence_modules, static_cast<std::int64_t>(node->sequence_nr()));
          t.last_backward_module = f.module;
        } else {
          f.module = t.last_backward_module;
        }
      } else {
        const auto parameter_module = module_of_inputs(s->module_of_storage, fn.inputs());
        if (s->backward_seen.load(std::memory_order_relaxed) && f.active) {
          f.phase = Phase::optimizer;
          f.module = parameter_module != 0 ? parameter_module : s->empty_id;
        } else {
          // Note [Module of an op]: the one decision the adapter and the graph tracer take too.
          f.phase = Phase::forward;
          const Frame* enclosing = t.depth >= 2 ? &t.frames[t.depth - 2] : nullptr;
          ModuleClues clues;
          clues.parameter = parameter_module;
          clues.scope = scope_name(*s, t);
          clues.enclosed = enclosing != nullptr && !enclosing->node;
          clues.enclosing = clues.enclosed ? enclosing->module : 0;
          clues.last_parameter = t.last_module;
          clues.op = fn.name();
          f.module = forward_module(s->modules, clues);
          if (parameter_module != 0) t.last_module = parameter_module;
          f.view = is_view(t, fn);
          f.first_sequence = at::sequence_number::peek();
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
    s->record_failure();
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
  ProfilerState* s = live_profiler().load(std::memory_order_acquire);
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
    // Note [Module of an op]: the autograd nodes this op made (its inner ops' too) are its module's;
    // Note [A custom function's node]: and a custom function's made just before it.
    if (f.first_sequence != UINT64_MAX && !f.view)
      remember_module_after(s->sequence_modules, t.sequence_end, f.first_sequence,
                            at::sequence_number::peek(), f.module, at::GradMode::is_enabled());
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
    s->record_failure();
  }
}

}  // namespace

}  // namespace detail

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
  s.generation = detail::profiler_generation().fetch_add(1) + 1;
  detail::map_modules(module, s.names, s.modules, s.module_of_storage);
  detail::ProfilerState* expected = nullptr;
  if (!detail::live_profiler().compare_exchange_strong(expected, state_.get())) {
    state_.reset();
    throw Error("tfdebug::torch::Profiler: another Profiler is running in this process; stop it first");
  }
  s.owner = &s.thread();
  if (options.memory) {
    s.reporter = detail::make_memory_reporter(&s);
    c10::ThreadLocalDebugInfo::_push(c10::DebugInfoKind::PROFILER_STATE, s.reporter);
  }
  s.callback =
      at::addGlobalCallback(at::RecordFunctionCallback(&detail::on_start, &detail::on_end)
                                .needsInputs(true)
                                .scopes({at::RecordScope::FUNCTION, at::RecordScope::BACKWARD_FUNCTION}));
}

Profiler::~Profiler() {
  if (state_) {
    try {
      (void)stop();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "tfdebug: the profiler could not stop: %s\n", e.what());
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
    for (auto& t : s.threads) detail::close_slices(*t, end);
  }
  s.owner->emit(end, s.step_name, profile::EventKind::kEnd);
  if (s.options.memory) {
    const auto rss = detail::rss_bytes();
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
        a.op = s.name(block.op);
        a.module = s.name(block.module);
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

}  // namespace tfdebug::torch
