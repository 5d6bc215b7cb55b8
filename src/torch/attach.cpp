// The LibTorch adapter: one global RecordFunction callback feeding an ObservationSink.
//
// Note [Frames]
// RecordFunction start and end callbacks of one thread nest like a stack (an op's inner ops start
// and end inside it), so each thread keeps a stack of frames: the start callback pushes what the
// end callback needs (phase, module, whether to observe, references to the op's floating-point
// inputs) and the end callback pops it. Frames are reused, so no op allocates once the stack has
// grown to the deepest nesting. The start callback returns no ObserverContext (that would be one
// heap allocation per op).
//
// Note [Producer or propagator]
// A non-finite output is the op's own doing when every floating-point input was finite. Inputs
// are only readable in the start callback, so it keeps references to them (no copy, no scan), and
// the end callback hands the sink an InputsCheck over them with each output: the sink scans the
// output anyway, and asks (the inputs get scanned) only when it found the output non-finite. An in-place op
// overwrites its input, so the input an op writes (schema alias info `Tensor(a!)`) is scanned in
// the start callback instead, before the op runs.
//
// Note [Outer ops only]
// Most of a step's ops run inside other ops: CPU bmm selects each matrix of the batch (12,000 of
// the demo model's 15,148 ops per step were such views), aten::linear calls aten::t and
// aten::addmm, layer_norm calls native_layer_norm. A callback on every op cost 1.64x a small
// model's step, however little it did. So an op is observed and the ops inside it are not: a bad
// value is reported at the op the caller called (aten::layer_norm, not native_layer_norm). The
// first time an op is seen on a thread, the ops inside it only push and pop a frame (kind inner)
// and teach the op's OpInfo that it has inner ops; from then on its start callback turns
// RecordFunction off on the thread until it ends (the end callback turns it back on;
// RecordFunction runs end callbacks from its destructor, also when the op throws), so its inner
// ops cost nothing. Ops without inner ops (most of the optimizer's in-place ops) never pay for
// the switch, which rebuilds LibTorch's thread-local callback list each time. Autograd nodes are ops' callers
// too: the ops inside a backward node are seen. Only dispatcher ops (those with a schema) turn recording off:
// named RECORD_FUNCTION ranges, such as the engine's "autograd::engine::evaluate_function: MmBackward0"
// around each backward node, contain the ops we want. The inner ops' autograd nodes take the module of the
// outer op (every sequence number consumed while it ran). AttachOptions::nested_ops brings the inner ops
// back.
//
// Note [Seen once]
// Composite ops return their inner op's tensor (aten::linear returns what aten::addmm made), so
// the same memory would be observed twice. Each thread remembers the last kSeen observed tensors
// by weak reference (which keeps the TensorImpl's address from being reused) and version counter
// (which changes when an in-place op rewrites it): an output equal to one of them is skipped.
// Views of an input (schema alias info without a write) are skipped without scanning.
//
// Note [Phase]
// An op runs in backward when its thread is inside an autograd graph task (the engine's worker
// threads, or the thread that called backward() for CPU graphs) or inside a backward node's
// scope; in the optimizer when it runs outside backward after this step's backward; otherwise in
// forward. The step markers reset this each step.
//
// Note [Module of an op]
// Forward: the module of a parameter the op reads (its storage is one of the module's
// parameters', so views such as weight.t() count), else the innermost Scope of the thread, else
// the module of the last parameter-reading op on the thread in this step. Every forward op with
// an autograd sequence number records its module in a ring indexed by that number (op_modules.hpp,
// shared with the op profiler); a backward
// node with the same number (Node::sequence_nr) looks it up, and the ops inside the node run in
// that module.
#include "tfdebug/torch/attach.hpp"

#include <ATen/SequenceNumber.h>
#include <ATen/core/Tensor.h>
#include <ATen/core/function_schema.h>
#include <ATen/record_function.h>
#include <torch/csrc/autograd/graph_task.h>
#include <torch/nn/module.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "op_modules.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/core/stats.hpp"

namespace tfdebug::torch {
namespace {

// ---- Interned module paths: ids that index a table which never moves or shrinks ----------------

constexpr std::uint32_t kMaxPaths = 1U << 16;

class PathTable {
 public:
  std::uint32_t intern(std::string_view path) {
    if (path.empty()) return 0;
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = ids_.find(path);
    if (it != ids_.end()) return it->second;
    if (storage_.size() + 1 >= kMaxPaths) return 0;  // beyond the table: reported as unknown
    storage_.emplace_back(path);
    auto id = static_cast<std::uint32_t>(storage_.size());
    ids_.emplace(storage_.back(), id);
    paths_[id].store(&storage_.back(), std::memory_order_release);
    return id;
  }
  std::string_view path(std::uint32_t id) const noexcept {
    const std::string* p = id < kMaxPaths ? paths_[id].load(std::memory_order_acquire) : nullptr;
    return p ? std::string_view(*p) : std::string_view();
  }

 private:
  std::mutex mutex_;
  std::deque<std::string> storage_;  // deque: elements never move
  std::map<std::string, std::uint32_t, std::less<>> ids_;
  std::array<std::atomic<const std::string*>, kMaxPaths> paths_{};
};

PathTable& paths() {
  static PathTable* table = new PathTable();  // never destroyed: ids outlive every attachment
  return *table;
}

// ---- Per-op facts from the schema, computed once per op and thread ---------------------------

struct OpInfo {
  bool uninitialised = false;        // empty*, resize_, set_: outputs hold garbage
  std::uint64_t view_outputs = 0;    // bit i: return i aliases an input without writing it
  std::uint64_t written_inputs = 0;  // bit i: argument i is written in place
  bool views_only = false;           // every return is a view of an input: nothing to observe
  bool named_range = false;          // no schema: a RECORD_FUNCTION range, not a dispatcher op
  bool has_inner = false;            // learned: other ops run inside this one
  bool gelu = false;                 // aten::gelu: its input goes with its output (saturation rule)
};

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

OpInfo describe_op(const at::RecordFunction& fn) {
  OpInfo info;
  std::string_view name = fn.name();
  info.uninitialised = starts_with(name, "aten::empty") || starts_with(name, "aten::new_empty") ||
                       name == "aten::resize_" || name == "aten::resize_as_" || name == "aten::set_";
  info.gelu = name == "aten::gelu";
  auto schema = fn.operator_schema();  // a copy: only once per op name and thread
  if (!schema) {
    info.named_range = true;
    return info;
  }
  const auto& returns = schema->returns();
  for (std::size_t i = 0; i < returns.size() && i < 64; ++i) {
    const auto* alias = returns[i].alias_info();
    if (alias && !alias->isWrite()) info.view_outputs |= std::uint64_t{1} << i;
  }
  info.views_only = !returns.empty() && returns.size() <= 64 &&
                    info.view_outputs ==
                        (returns.size() == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << returns.size()) - 1);
  const auto& arguments = schema->arguments();
  for (std::size_t i = 0; i < arguments.size() && i < 64; ++i) {
    const auto* alias = arguments[i].alias_info();
    if (alias && alias->isWrite()) info.written_inputs |= std::uint64_t{1} << i;
  }
  return info;
}

// ---- Tensors as views ------------------------------------------------------------------------

std::optional<DType> dtype_of(at::ScalarType type) {
  switch (type) {
    case at::kFloat:
      return DType::f32;
    case at::kDouble:
      return DType::f64;
    case at::kHalf:
      return DType::f16;
    case at::kBFloat16:
      return DType::bf16;
    default:
      return std::nullopt;
  }
}

// A view of a dense CPU floating-point tensor with at least one element; nullopt otherwise.
std::optional<TensorView> view_of(const at::Tensor& t) {
  if (!t.defined() || t.layout() != at::kStrided || !t.is_cpu() || !t.has_storage()) return std::nullopt;
  auto dtype = dtype_of(t.scalar_type());
  if (!dtype) return std::nullopt;
  const auto rank = t.dim();
  if (rank > kMaxRank || t.numel() == 0) return std::nullopt;
  std::array<std::int64_t, kMaxRank> shape{};
  std::array<std::int64_t, kMaxRank> strides{};
  for (std::int64_t d = 0; d < rank; ++d) {
    shape[std::size_t(d)] = t.sizes()[std::size_t(d)];
    strides[std::size_t(d)] = t.strides()[std::size_t(d)];
  }
  return TensorView(t.data_ptr(), *dtype, std::span<const std::int64_t>(shape.data(), std::size_t(rank)),
                    std::span<const std::int64_t>(strides.data(), std::size_t(rank)));
}

bool is_finite(TensorView view) {
  static const StatsOptions kOptions;  // one thread, fast moments
  return compute_stats(view, kOptions).nonfinite() == 0;
}

// ---- Per-thread state (Note [Frames]) --------------------------------------------------------

constexpr std::size_t kMaxInputs = 8;
constexpr std::uint64_t kNoSequence = ~std::uint64_t{0};
constexpr std::size_t kSeen = 8;

enum class FrameKind : std::uint8_t { op, node, user_scope, inner };

struct Frame {
  FrameKind kind = FrameKind::op;
  bool observe = false;
  bool inputs_overflow = false;     // more floating inputs than kMaxInputs: finiteness unknown
  std::int8_t written_finite = -1;  // -1: no in-place input; else whether it was finite before
  bool outer = false;               // an op whose inner ops are not observed (Note [Outer ops only])
  bool restore_recording = false;   // the start callback turned recording off for the inner ops
  std::uint64_t first_sequence = kNoSequence;  // forward: the next autograd sequence number at start
  Phase phase = Phase::forward;
  std::uint32_t module = 0;
  std::uint8_t input_count = 0;
  OpInfo* info = nullptr;
  std::array<at::Tensor, kMaxInputs> inputs;
};

struct SeenTensor {
  c10::weak_intrusive_ptr<c10::TensorImpl, c10::UndefinedTensorImpl> impl{
      c10::weak_intrusive_ptr<c10::TensorImpl, c10::UndefinedTensorImpl>(
          c10::intrusive_ptr<c10::TensorImpl, c10::UndefinedTensorImpl>())};
  std::int64_t version = -1;
};

struct ThreadState {
  std::uint64_t generation = 0;  // the step generation these fields belong to
  std::vector<Frame> frames = std::vector<Frame>(16);
  std::size_t depth = 0;
  std::uint32_t last_module = 0;           // forward: the last parameter-reading op's module
  std::uint32_t last_backward_module = 0;  // backward: the last node's module
  std::vector<std::uint32_t> scopes;       // tfdebug::torch::Scope and USER_SCOPE paths
  std::vector<std::uint32_t> nodes;        // modules of the backward nodes running
  std::array<SeenTensor, kSeen> seen;
  std::size_t seen_next = 0;
  std::unordered_map<const char*, OpInfo> ops;

  Frame& push() {
    if (depth == frames.size()) frames.resize(frames.size() * 2);
    Frame& f = frames[depth++];
    f.kind = FrameKind::op;
    f.observe = false;
    f.inputs_overflow = false;
    f.written_finite = -1;
    f.outer = false;
    f.restore_recording = false;
    f.first_sequence = kNoSequence;
    f.input_count = 0;
    f.info = nullptr;
    return f;
  }
};

ThreadState& thread_state() {
  thread_local ThreadState state;
  return state;
}

std::unique_ptr<at::ObserverContext> on_start(const at::RecordFunction& fn);
void on_end(const at::RecordFunction& fn, at::ObserverContext* context);

}  // namespace

// ---- The attachment ------------------------------------------------------------------------------

namespace detail {

struct Parameter {
  std::uint32_t name = 0;    // interned full name, "blocks.0.attn.q.weight"
  std::uint32_t module = 0;  // interned module path, "blocks.0.attn.q"
  at::Tensor tensor;
  std::vector<std::byte> before;  // the value at step_begin (track_updates)
  std::vector<std::byte> update;  // new - old, computed at step_end
};

struct AttachState {
  ObservationSink* sink = nullptr;
  AttachOptions options;
  std::optional<at::CallbackHandle> callback;  // registered for the steps that observe ops

  // Note [Op steps]: RecordFunction costs every op of the step even when the callback does
  // nothing, so watch registers it only every options.watch_outputs_every steps; diagnose always.
  void set_callback(bool on) {
    if (on && !callback) {
      callback =
          at::addGlobalCallback(at::RecordFunctionCallback(&on_start, &on_end)
                                    .needsInputs(true)
                                    .needsOutputs(true)
                                    .scopes({at::RecordScope::FUNCTION, at::RecordScope::BACKWARD_FUNCTION,
                                             at::RecordScope::USER_SCOPE}));
    } else if (!on && callback) {
      at::removeCallback(*callback);
      callback.reset();
    }
  }
  std::vector<Parameter> parameters;
  StorageModules module_of_storage;  // parameter storage -> module

  std::atomic<std::int64_t> step{0};
  std::atomic<bool> in_step{false};
  std::atomic<Tier> tier{Tier::watch};
  std::atomic<std::uint64_t> generation{1};
  std::atomic<bool> backward_seen{false};
  std::atomic<bool> gradients_pending{false};

  SequenceModules sequence_modules;  // Note [Module of an op]

  std::atomic<std::int64_t> ops{0};
  std::atomic<std::int64_t> observed{0};
  std::atomic<std::int64_t> skipped_views{0};
  std::atomic<std::int64_t> skipped_duplicates{0};
  std::atomic<std::int64_t> skipped_uninitialised{0};
  std::atomic<std::int64_t> sink_failures{0};

  void deliver(const Observation& observation) {
    try {
      sink->observe(observation);
      observed.fetch_add(1, std::memory_order_relaxed);
    } catch (...) {
      sink_failures.fetch_add(1, std::memory_order_relaxed);
    }
  }

  void observe_gradients() {
    const auto now = step.load(std::memory_order_relaxed);
    for (const auto& p : parameters) {
      auto view = view_of(p.tensor.grad());
      if (!view) continue;
      deliver({now, Phase::backward, Role::gradient, paths().path(p.module), paths().path(p.name), *view,
               std::nullopt});
    }
  }
};

}  // namespace detail

namespace {

std::atomic<detail::AttachState*> g_state{nullptr};

bool inside_backward(const ThreadState& t) {
  return !t.nodes.empty() || ::torch::autograd::get_current_graph_task_nodes_in_graph() != nullptr;
}

OpInfo& op_info(ThreadState& t, const at::RecordFunction& fn) {
  const char* name = fn.name();  // schema-owned: stable for the op's lifetime
  auto it = t.ops.find(name);
  if (it == t.ops.end()) it = t.ops.emplace(name, describe_op(fn)).first;
  return it->second;
}

// Keeps references to the op's floating-point inputs (Note [Producer or propagator]).
void keep_inputs(Frame& f, const at::RecordFunction& fn) {
  const auto inputs = fn.inputs();
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const auto& value = inputs[i];
    auto keep = [&](const at::Tensor& tensor, bool written) {
      if (!tensor.defined() || !tensor.is_floating_point()) return;
      if (written) {
        auto view = view_of(tensor);
        bool finite = !view || is_finite(*view);
        f.written_finite = std::int8_t(f.written_finite == 0 ? 0 : (finite ? 1 : 0));
        return;
      }
      if (f.input_count == kMaxInputs) {
        f.inputs_overflow = true;
        return;
      }
      f.inputs[f.input_count++] = tensor;
    };
    const bool written = i < 64 && ((f.info->written_inputs >> i) & 1U);
    if (value.isTensor()) {
      keep(value.toTensor(), written);
    } else if (value.isTensorList()) {
      const auto list = value.toTensorList();
      for (std::size_t j = 0; j < list.size(); ++j) keep(list.get(j), false);
    }
  }
}

std::unique_ptr<at::ObserverContext> on_start(const at::RecordFunction& fn) {
  ThreadState& t = thread_state();
  Frame& f = t.push();
  detail::AttachState* s = g_state.load(std::memory_order_acquire);
  if (s == nullptr || !s->in_step.load(std::memory_order_relaxed)) return nullptr;
  if (t.depth >= 2) {  // Note [Outer ops only]: an op inside an op that is observed
    Frame& parent = t.frames[t.depth - 2];
    if (parent.kind == FrameKind::inner || (parent.kind == FrameKind::op && parent.outer)) {
      f.kind = FrameKind::inner;
      if (parent.kind == FrameKind::op) parent.info->has_inner = true;
      return nullptr;
    }
  }
  try {
    const auto generation = s->generation.load(std::memory_order_relaxed);
    if (t.generation != generation) {
      t.generation = generation;
      t.last_module = 0;
      t.last_backward_module = 0;
      for (auto& seen : t.seen) seen = SeenTensor{};
    }
    switch (fn.scope()) {
      case at::RecordScope::BACKWARD_FUNCTION: {
        f.kind = FrameKind::node;
        const auto module = s->sequence_modules.module_of(fn.seqNr());
        t.nodes.push_back(module);
        t.last_backward_module = module;
        if (!s->backward_seen.load(std::memory_order_relaxed)) s->backward_seen.store(true);
        return nullptr;
      }
      case at::RecordScope::USER_SCOPE:
        f.kind = FrameKind::user_scope;
        t.scopes.push_back(paths().intern(fn.name()));
        return nullptr;
      default:
        break;
    }
    s->ops.fetch_add(1, std::memory_order_relaxed);
    const bool diagnose = s->tier.load(std::memory_order_relaxed) == Tier::diagnose;
    f.info = &op_info(t, fn);
    f.outer = !s->options.nested_ops && !f.info->named_range;
    if (f.outer && f.info->has_inner) {  // Note [Outer ops only]
      f.restore_recording = true;
      at::enableRecordFunction(false);
    }
    // Views get their module for the sequence ring and nothing else (no parameter lookup, no
    // inputs kept).
    const bool views_only = f.info->views_only;
    if (inside_backward(t)) {
      f.phase = Phase::backward;
      f.module = t.nodes.empty() ? t.last_backward_module : t.nodes.back();
      if (!s->backward_seen.load(std::memory_order_relaxed)) s->backward_seen.store(true);
      if (!diagnose) return nullptr;  // watch observes no backward op
    } else {
      const auto parameter_module = views_only ? 0 : detail::module_of_inputs(s->module_of_storage, fn);
      if (s->backward_seen.load(std::memory_order_relaxed)) {
        f.phase = Phase::optimizer;
        if (s->gradients_pending.load(std::memory_order_relaxed) && s->gradients_pending.exchange(false)) {
          s->observe_gradients();
        }
        f.module = parameter_module;
      } else {
        f.phase = Phase::forward;
        if (parameter_module != 0) {
          t.last_module = parameter_module;
          f.module = parameter_module;
        } else {
          f.module = t.scopes.empty() ? t.last_module : t.scopes.back();
        }
        s->sequence_modules.remember(fn.seqNr(), f.module);
        f.first_sequence = at::sequence_number::peek();
      }
      // watch: the outputs of the forward ops that read a parameter (the parameterised layers)
      if (!diagnose && !(f.phase == Phase::forward && parameter_module != 0)) return nullptr;
    }
  } catch (...) {
    return nullptr;
  }
  // Observed: keep what the end callback needs.
  try {
    if (f.info->views_only) {
      s->skipped_views.fetch_add(1, std::memory_order_relaxed);
      return nullptr;
    }
    if (f.info->uninitialised) {
      s->skipped_uninitialised.fetch_add(1, std::memory_order_relaxed);
      return nullptr;
    }
    f.observe = true;
    keep_inputs(f, fn);
  } catch (...) {
    f.observe = false;
  }
  return nullptr;
}

// Note [Seen once]
bool seen_before(ThreadState& t, const at::Tensor& tensor) {
  const auto* impl = tensor.unsafeGetTensorImpl();
  const auto version = tensor._version();
  for (const auto& seen : t.seen) {
    if (seen.impl._unsafe_get_target() == impl && seen.version == version) return true;
  }
  auto& slot = t.seen[t.seen_next];
  t.seen_next = (t.seen_next + 1) % kSeen;
  slot.impl = c10::weak_intrusive_ptr<c10::TensorImpl, c10::UndefinedTensorImpl>(tensor.getIntrusivePtr());
  slot.version = version;
  return false;
}

// Note [Producer or propagator]: the inputs kept by the start callback, scanned only when a
// consumer found an output non-finite and asks.
class FrameInputs final : public InputsCheck {
 public:
  explicit FrameInputs(const Frame& f) : f_(f) {}
  std::optional<bool> inputs_finite() const override {
    if (f_.inputs_overflow) return std::nullopt;
    if (f_.written_finite == 0) return false;
    for (std::size_t i = 0; i < f_.input_count; ++i) {
      auto view = view_of(f_.inputs[i]);
      if (view && !is_finite(*view)) return false;
    }
    return true;
  }

 private:
  const Frame& f_;
};

void observe_output(detail::AttachState& s, ThreadState& t, const Frame& f, const at::RecordFunction& fn,
                    const at::Tensor& tensor, std::size_t index) {
  if (index < 64 && ((f.info->view_outputs >> index) & 1U)) {
    s.skipped_views.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  auto view = view_of(tensor);
  if (!view) return;
  if (seen_before(t, tensor)) {
    s.skipped_duplicates.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  const FrameInputs inputs(f);
  std::optional<TensorView> input;
  if (f.info->gelu && f.input_count > 0) input = view_of(f.inputs[0]);
  s.deliver({s.step.load(std::memory_order_relaxed), f.phase, Role::output, paths().path(f.module), fn.name(),
             *view, std::nullopt, &inputs, input ? &*input : nullptr});
}

void on_end(const at::RecordFunction& fn, at::ObserverContext* /*context*/) {
  ThreadState& t = thread_state();
  if (t.depth == 0) return;
  Frame& f = t.frames[--t.depth];
  if (f.kind == FrameKind::node) {
    if (!t.nodes.empty()) t.nodes.pop_back();
    return;
  }
  if (f.kind == FrameKind::user_scope) {
    if (!t.scopes.empty()) t.scopes.pop_back();
    return;
  }
  if (f.kind == FrameKind::inner) return;
  if (f.restore_recording) {
    f.restore_recording = false;
    at::enableRecordFunction(true);
  }
  if (f.outer && f.first_sequence != kNoSequence) {
    // The inner ops went unobserved; the autograd nodes they created belong to this op's module.
    detail::AttachState* s = g_state.load(std::memory_order_acquire);
    if (s != nullptr && f.phase == Phase::forward) {
      const std::uint64_t end = at::sequence_number::peek();
      for (std::uint64_t n = f.first_sequence; n < end && n < f.first_sequence + 4096; ++n) {
        s->sequence_modules.remember(std::int64_t(n), f.module);
      }
    }
  }
  if (f.observe) {
    detail::AttachState* s = g_state.load(std::memory_order_acquire);
    if (s != nullptr) {
      try {
        const auto& outputs = fn.outputs();
        for (std::size_t i = 0; i < outputs.size(); ++i) {
          if (outputs[i].isTensor()) {
            observe_output(*s, t, f, fn, outputs[i].toTensor(), i);
          } else if (outputs[i].isTensorList()) {
            const auto list = outputs[i].toTensorList();
            for (std::size_t j = 0; j < list.size(); ++j) observe_output(*s, t, f, fn, list.get(j), i);
          }
        }
      } catch (...) {
        s->sink_failures.fetch_add(1, std::memory_order_relaxed);
      }
    }
    f.observe = false;
  }
  for (std::size_t i = 0; i < f.input_count; ++i) f.inputs[i].reset();
  f.input_count = 0;
}

void copy_values(const at::Tensor& tensor, std::vector<std::byte>& into) {
  into.resize(std::size_t(tensor.numel()) * tensor.element_size());
  std::memcpy(into.data(), tensor.data_ptr(), into.size());
}

template <typename T>
void subtract(const std::byte* now, const std::byte* before, std::byte* out, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) {
    T a;
    T b;
    std::memcpy(&a, now + i * sizeof(T), sizeof(T));
    std::memcpy(&b, before + i * sizeof(T), sizeof(T));
    const T d = a - b;
    std::memcpy(out + i * sizeof(T), &d, sizeof(T));
  }
}

bool trackable(const at::Tensor& tensor) {
  return tensor.is_cpu() && tensor.is_contiguous() &&
         (tensor.scalar_type() == at::kFloat || tensor.scalar_type() == at::kDouble);
}

}  // namespace

// ---- Attachment ----------------------------------------------------------------------------------

Attachment attach(ObservationSink& sink, ::torch::nn::Module& module, const AttachOptions& options) {
  auto state = std::make_unique<detail::AttachState>();
  state->sink = &sink;
  state->options = options;
  for (const auto& named : module.named_modules(/*name_prefix=*/"", /*include_self=*/true)) {
    const std::string& path = named.key();
    const auto module_id = paths().intern(path);
    for (const auto& parameter : named.value()->named_parameters(/*recurse=*/false)) {
      detail::Parameter p;
      p.name = paths().intern(path.empty() ? parameter.key() : path + "." + parameter.key());
      p.module = module_id;
      p.tensor = parameter.value();
      if (p.tensor.defined() && p.tensor.has_storage()) {
        state->module_of_storage.emplace(p.tensor.storage().data(), module_id);
      }
      state->parameters.push_back(std::move(p));
    }
  }
  detail::AttachState* expected = nullptr;
  if (!g_state.compare_exchange_strong(expected, state.get())) {
    throw Error("tfdebug::torch::attach: another attachment is live in this process; destroy it first");
  }
  return Attachment(std::move(state));
}

Attachment::Attachment(std::unique_ptr<detail::AttachState> state) : state_(std::move(state)) {}
Attachment::Attachment(Attachment&& other) noexcept = default;
Attachment& Attachment::operator=(Attachment&& other) noexcept {
  if (this != &other) {
    detach();
    state_ = std::move(other.state_);
  }
  return *this;
}
Attachment::~Attachment() {
  detach();
}

void Attachment::detach() noexcept {
  if (!state_) return;
  state_->set_callback(false);
  g_state.store(nullptr, std::memory_order_release);
  // This thread's remembered tensors refer to the attachment's steps; forget them now.
  for (auto& seen : thread_state().seen) seen = SeenTensor{};
  state_.reset();
}

void Attachment::step_begin(std::int64_t step) {
  if (!state_) throw Error("tfdebug::torch: step_begin on a detached attachment");
  auto& s = *state_;
  if (s.sink->should_stop()) {
    throw Error("tfdebug: stopping before step " + std::to_string(step) +
                ": the session found an error and was told to stop at the first one");
  }
  s.in_step.store(false);
  s.sink->begin_step(step);
  const Tier tier = s.sink->tier();
  s.tier.store(tier);
  const auto every = std::max<std::int64_t>(1, s.options.watch_outputs_every);
  s.set_callback(tier == Tier::diagnose || step % every == 0);
  s.step.store(step);
  s.generation.fetch_add(1);
  s.backward_seen.store(false);
  s.gradients_pending.store(true);
  for (auto& p : s.parameters) {
    auto view = view_of(p.tensor);
    if (!view) continue;
    s.deliver({step, Phase::forward, Role::parameter, paths().path(p.module), paths().path(p.name), *view,
               std::nullopt});
    if (s.options.track_updates && trackable(p.tensor)) copy_values(p.tensor, p.before);
  }
  s.in_step.store(true);
}

void Attachment::step_end(std::int64_t step, std::optional<double> loss) {
  if (!state_) throw Error("tfdebug::torch: step_end on a detached attachment");
  auto& s = *state_;
  s.in_step.store(false);
  // Without the op callback this step, backward went unseen: the gradients are read here.
  const bool backward = s.backward_seen.load() || !s.callback;
  if (backward && s.gradients_pending.exchange(false)) s.observe_gradients();
  if (s.options.track_updates && backward) {
    for (auto& p : s.parameters) {
      if (!trackable(p.tensor) ||
          p.before.size() != std::size_t(p.tensor.numel()) * p.tensor.element_size()) {
        continue;
      }
      p.update.resize(p.before.size());
      const auto* now = static_cast<const std::byte*>(p.tensor.data_ptr());
      if (p.tensor.scalar_type() == at::kFloat) {
        subtract<float>(now, p.before.data(), p.update.data(), std::size_t(p.tensor.numel()));
      } else {
        subtract<double>(now, p.before.data(), p.update.data(), std::size_t(p.tensor.numel()));
      }
      auto shape = p.tensor.sizes();
      if (shape.size() > std::size_t(kMaxRank)) continue;
      TensorView update(p.update.data(), *dtype_of(p.tensor.scalar_type()),
                        std::span<const std::int64_t>(shape.data(), shape.size()));
      s.deliver({step, Phase::optimizer, Role::update, paths().path(p.module), paths().path(p.name), update,
                 std::nullopt});
    }
  }
  s.sink->end_step(step, loss);
  if (s.sink->should_stop()) {
    throw Error("tfdebug: stopping after step " + std::to_string(step) +
                ": the session found an error and was told to stop at the first one");
  }
}

Attachment::Counters Attachment::counters() const noexcept {
  if (!state_) return {};
  const auto& s = *state_;
  return {s.ops.load(),
          s.observed.load(),
          s.skipped_views.load(),
          s.skipped_duplicates.load(),
          s.skipped_uninitialised.load(),
          s.sink_failures.load()};
}

// ---- Scope ---------------------------------------------------------------------------------------

std::string_view detail::current_scope() noexcept {
  const auto& scopes = thread_state().scopes;
  return scopes.empty() ? std::string_view() : paths().path(scopes.back());
}

Scope::Scope(std::string_view path) {
  thread_state().scopes.push_back(paths().intern(path));
}
Scope::~Scope() {
  auto& scopes = thread_state().scopes;
  if (!scopes.empty()) scopes.pop_back();
}

}  // namespace tfdebug::torch
