// The LibTorch adapter: a dispatcher fallback that sees the ops of a training step, feeding an
// ObservationSink.
//
// Note [Interception]
// An observer of ops pays on every op, so how it is called sets the floor of what diagnose costs.
// A RecordFunction callback costs every op a RecordFunction object with boxed inputs and
// outputs, even when the callback does nothing (1.6x the demo model's step); turning recording off
// inside the ops it saw (so that their inner ops cost nothing) rebuilt LibTorch's thread-local
// callback list twice per op, and still cost 1.3x. So ops are intercepted in the dispatcher
// instead: a boxed fallback kernel for a mode key, which the thread calling step_begin puts in its
// thread-local set of included dispatch keys for the steps that observe ops. Every op that thread
// calls (and the autograd engine's, which copies the thread-local state of the thread that called
// backward) dispatches to on_op first, with its arguments boxed on the stack; on_op looks at them,
// redispatches below the mode key, and reads the outputs from the stack. An empty fallback costs
// the demo step 1.01-1.05x once view-only ops pass through (Note [Views pass through]). LibTorch
// 1.13 has no mode key for C++ users: the Python dispatcher keys are libtorch's own, functorch's
// is functorch's; TESTING_ONLY_GenericMode is the one mode key nothing in LibTorch registers, so
// that is the key (attach says so if something else took it). User scopes are not ops: a
// RecordFunction callback on the USER_SCOPE scope only (so that ops and autograd nodes pay
// nothing for it) tracks them. Backward nodes are asked for, not tracked (Note [Current node]).
//
// Note [Outer ops only]
// Most of a step's ops run inside other ops: CPU bmm selects each matrix of the batch (12,000 of
// the demo model's 15,148 ops per step were such views), aten::linear calls aten::t and
// aten::addmm, layer_norm calls native_layer_norm. So an op is observed and the ops inside it are
// not: on_op excludes the mode key while the op runs, and a bad value is reported at the op the
// caller called (aten::layer_norm, not native_layer_norm). Autograd nodes are ops' callers too: the
// ops inside a backward node are seen (the engine calls them, not an op). The autograd nodes that
// the inner ops create take the module of the outer op (every sequence number consumed while it
// ran). AttachOptions::nested_ops keeps the key included inside ops and brings the inner ops back.
//
// Note [Producer or propagator]
// A non-finite output is the op's own doing when every floating-point input was finite. on_op
// keeps references to the inputs before the op runs (no copy, no scan) and hands the sink an
// InputsCheck over them with each output: the sink scans the output anyway, and asks (the inputs
// get scanned) only when it found the output non-finite. An in-place op overwrites its input, so
// the input an op writes (schema alias info `Tensor(a!)`) is scanned before the op runs instead
// (or its finiteness taken from the step's earlier observation of it, Note [Seen once]). An
// argument written without being read is no input of the op: out= arguments, and self of zero_,
// fill_, copy_ and the random fills.
//
// Note [Seen once]
// Composite ops return their inner op's tensor (aten::linear returns what aten::addmm made), so
// the same memory would be observed twice. Each thread remembers the last kSeen observed tensors
// by weak reference (which keeps the TensorImpl's address from being reused) and version counter
// (which changes when an in-place op rewrites it): an output equal to one of them is skipped, and
// so is an output that is the memory of one of them, still alive and unchanged (aten::_unsafe_view
// returns its input's storage without being a view in the schema). Views of an input (schema
// alias info without a write) are skipped without scanning. Each entry also keeps what the sink
// said of the values (ObservationSink::observe returns whether they were all finite), so the
// input an in-place op is about to overwrite is not read again when the step already saw it
// unchanged (Adam's exp_avg.mul_(b1).add_(g)).
//
// Note [Phase]
// An op runs in backward when its thread is inside an autograd graph task (the engine's worker
// threads, or the thread that called backward() for CPU graphs) or inside a backward node's
// scope; in the optimizer when it runs outside backward, after this step's backward, with grad
// mode off (LibTorch's optimizers run under NoGradGuard, and an in-place update of a parameter
// must); otherwise in forward (also the forward of a second micro-batch that accumulates
// gradients). The step markers reset this each step.
//
// Note [Optimizer]
// An optimizer's step is hundreds of small elementwise ops (Adam: 8 per parameter, 304 a step on
// the demo model, against 151 forward and backward ops), and interception costs each op the
// same fixed price whatever its size. What they compute is judged per parameter instead: the update (new -
// old, at step_end) with whether the parameter (step_begin) and its gradient (after backward) were finite, so
// that an update that went non-finite from finite inputs is the optimizer's own doing
// (Monitors::check_nonfinite). So at the first optimizer op (which observes the gradients) the thread stops
// intercepting until the next step_begin, unless AttachOptions::optimizer_ops asks for the ops. Ops between
// backward and the optimizer that run without grad mode (gradient clipping) count as the optimizer's.
//
// Note [Current node]
// The backward node an op runs in gives the op its module. A RecordFunction callback on the
// BACKWARD_FUNCTION scope could track the nodes, but it makes every node build its name and a
// RecordFunction with its callbacks: 2.2% of the demo step (measured against the same adapter
// without it), more than the rest of the interception. The engine already keeps the node it is
// evaluating, in a thread-local that Node::assign_parent (exported) hands to the node's
// AnomalyMetadata::assign_parent (virtual). So each thread owns a probe node whose metadata is
// its own AnomalyMetadata subclass: probe.assign_parent() reports the current node, at the price
// of two calls, without a callback and without any change to the user's graph.
//
// Note [Module of an op]
// Forward: the module of a parameter the op reads (its storage is one of the module's
// parameters', so views such as weight.t() count), else the innermost Scope of the thread, else
// the module of the last parameter-reading op on the thread in this step. The autograd sequence
// numbers a forward op consumed (at::sequence_number::peek() before and after it: its node and
// its inner ops' nodes) record its module in a ring indexed by number (op_modules.hpp, shared with
// the op profiler); a backward node with the same number (Node::sequence_nr, from the node's
// RecordFunction range) looks it up, and the ops inside the node run in that module.
#include "tfdebug/torch/attach.hpp"

#include <ATen/SequenceNumber.h>
#include <ATen/core/Tensor.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/function_schema.h>
#include <ATen/core/stack.h>
#include <ATen/ops/_log_softmax_backward_data_ops.h>
#include <ATen/ops/_softmax_backward_data_ops.h>
#include <ATen/ops/_unsafe_view_ops.h>
#include <ATen/ops/add_ops.h>
#include <ATen/ops/addcdiv_ops.h>
#include <ATen/ops/addcmul_ops.h>
#include <ATen/ops/addmm_ops.h>
#include <ATen/ops/bmm_ops.h>
#include <ATen/ops/clone_ops.h>
#include <ATen/ops/cross_entropy_loss_ops.h>
#include <ATen/ops/div_ops.h>
#include <ATen/ops/dropout_ops.h>
#include <ATen/ops/embedding_backward_ops.h>
#include <ATen/ops/embedding_ops.h>
#include <ATen/ops/gelu_backward_ops.h>
#include <ATen/ops/gelu_ops.h>
#include <ATen/ops/layer_norm_ops.h>
#include <ATen/ops/linear_ops.h>
#include <ATen/ops/log_softmax_ops.h>
#include <ATen/ops/matmul_ops.h>
#include <ATen/ops/mean_ops.h>
#include <ATen/ops/mm_ops.h>
#include <ATen/ops/mul_ops.h>
#include <ATen/ops/native_layer_norm_backward_ops.h>
#include <ATen/ops/nll_loss_backward_ops.h>
#include <ATen/ops/relu_ops.h>
#include <ATen/ops/sigmoid_backward_ops.h>
#include <ATen/ops/sigmoid_ops.h>
#include <ATen/ops/softmax_ops.h>
#include <ATen/ops/sqrt_ops.h>
#include <ATen/ops/sub_ops.h>
#include <ATen/ops/sum_ops.h>
#include <ATen/ops/tanh_backward_ops.h>
#include <ATen/ops/tanh_ops.h>
#include <ATen/ops/threshold_backward_ops.h>
#include <ATen/record_function.h>
#include <c10/core/GradMode.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <torch/csrc/autograd/anomaly_mode.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/functions/accumulate_grad.h>
#include <torch/csrc/autograd/graph_task.h>
#include <torch/library.h>
#include <torch/nn/module.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <span>
#include <string>
#include <typeinfo>
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
  std::uint64_t written_inputs = 0;  // bit i: argument i is written in place, its values read first
  // bit i: argument i is written in place without its values being read: out= arguments, and
  // self of the ops that overwrite it whole (zero_, fill_, copy_, the random fills). Neither
  // scanned before the op nor an input the output depends on.
  std::uint64_t overwritten_inputs = 0;
  bool views_only = false;      // every return is a view of an input: nothing to observe
  std::uint32_t arguments = 0;  // schema argument and return counts: the op's stack slots
  std::uint32_t returns = 0;
  std::string_view name;  // the schema's: lives as long as the op is registered
  bool gelu = false;      // aten::gelu: its input goes with its output (saturation rule)
};

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

OpInfo describe_op(const c10::FunctionSchema& schema) {
  OpInfo info;
  std::string_view name = schema.name();
  info.name = name;
  info.arguments = static_cast<std::uint32_t>(schema.arguments().size());
  info.returns = static_cast<std::uint32_t>(schema.returns().size());
  info.uninitialised = starts_with(name, "aten::empty") || starts_with(name, "aten::new_empty") ||
                       name == "aten::resize_" || name == "aten::resize_as_" || name == "aten::set_";
  info.gelu = name == "aten::gelu";
  const auto& returns = schema.returns();
  for (std::size_t i = 0; i < returns.size() && i < 64; ++i) {
    const auto* alias = returns[i].alias_info();
    if (alias && !alias->isWrite()) info.view_outputs |= std::uint64_t{1} << i;
  }
  info.views_only = !returns.empty() && returns.size() <= 64 &&
                    info.view_outputs ==
                        (returns.size() == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << returns.size()) - 1);
  static constexpr std::string_view kOverwrites[] = {
      "aten::zero_",      "aten::fill_",   "aten::copy_",      "aten::normal_",
      "aten::uniform_",   "aten::random_", "aten::bernoulli_", "aten::exponential_",
      "aten::geometric_", "aten::cauchy_", "aten::log_normal_"};
  const bool overwrites =
      std::find(std::begin(kOverwrites), std::end(kOverwrites), name) != std::end(kOverwrites);
  const auto& arguments = schema.arguments();
  for (std::size_t i = 0; i < arguments.size() && i < 64; ++i) {
    const auto* alias = arguments[i].alias_info();
    if (!alias || !alias->isWrite()) continue;
    if (arguments[i].is_out() || (overwrites && i == 0))
      info.overwritten_inputs |= std::uint64_t{1} << i;
    else
      info.written_inputs |= std::uint64_t{1} << i;
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
  const auto sizes = t.sizes();
  if (sizes.size() > std::size_t(kMaxRank) || t.numel() == 0) return std::nullopt;
  const auto strides = t.strides();
  return TensorView(t.data_ptr(), *dtype, std::span<const std::int64_t>(sizes.data(), sizes.size()),
                    std::span<const std::int64_t>(strides.data(), strides.size()));
}

// ---- Per-thread state ----------------------------------------------------------------------

constexpr std::size_t kMaxInputs = 8;
constexpr std::size_t kSeen = 8;

// Note [Interception]
constexpr c10::DispatchKey kModeKey = c10::DispatchKey::TESTING_ONLY_GenericMode;

struct SeenTensor {
  c10::weak_intrusive_ptr<c10::TensorImpl, c10::UndefinedTensorImpl> impl{
      c10::weak_intrusive_ptr<c10::TensorImpl, c10::UndefinedTensorImpl>(
          c10::intrusive_ptr<c10::TensorImpl, c10::UndefinedTensorImpl>())};
  std::int64_t version = -1;
  std::int8_t finite = -1;  // what the sink said of its values: -1 unknown, 0 some NaN/Inf, 1 finite
  // Its memory, for tensors that share it without being views (aten::_unsafe_view's output):
  // the storage, the first element's offset, the element count and type; contiguous tensors only.
  const c10::StorageImpl* storage = nullptr;
  std::int64_t offset = 0;
  std::int64_t numel = 0;
  at::ScalarType dtype = at::ScalarType::Undefined;
};

// The storage of a contiguous CPU tensor, nullptr for any other.
const c10::StorageImpl* contiguous_storage(const c10::TensorImpl& impl) {
  if (impl.layout() != at::kStrided || !impl.is_cpu() || !impl.is_contiguous()) return nullptr;
  return impl.unsafe_storage().unsafeGetStorageImpl();
}

struct ThreadState {
  std::uint64_t generation = 0;            // the step generation these fields belong to
  std::uint32_t last_module = 0;           // forward: the last parameter-reading op's module
  std::uint32_t last_backward_module = 0;  // backward: the last node's module
  std::vector<std::uint32_t> scopes;       // tfdebug::torch::Scope and USER_SCOPE paths
  // The backward node of the thread's last backward op, its sequence number and what it means for
  // the op (Note [Current node]): its module, and whether it accumulates a gradient.
  const ::torch::autograd::Node* node = nullptr;
  std::uint64_t node_sequence = 0;
  std::uint32_t node_module = 0;
  bool node_accumulates = false;
  std::array<SeenTensor, kSeen> seen;
  std::size_t seen_next = 0;
  std::unordered_map<const c10::FunctionSchema*, OpInfo> ops;
  std::array<std::pair<const c10::FunctionSchema*, const OpInfo*>, 256> recent_ops{};
};

ThreadState& thread_state() {
  thread_local ThreadState state;
  return state;
}

// Note [Current node]: a node that never runs; its metadata catches the node being evaluated.
class NodeProbe final : public ::torch::autograd::Node {
 public:
  NodeProbe() : Node(/*sequence_nr=*/UINT64_MAX) {
    auto metadata = std::make_unique<Catch>();
    catch_ = metadata.get();
    anomaly_metadata_ = std::move(metadata);
  }
  ::torch::autograd::variable_list apply(::torch::autograd::variable_list&& /*inputs*/) override {
    return {};
  }

  // The node this thread's autograd engine is evaluating; nullptr outside backward.
  const ::torch::autograd::Node* current() {
    catch_->parent = nullptr;
    assign_parent();
    return catch_->parent;
  }

 private:
  struct Catch final : ::torch::autograd::AnomalyMetadata {
    void assign_parent(const std::shared_ptr<::torch::autograd::Node>& node) override { parent = node.get(); }
    const ::torch::autograd::Node* parent = nullptr;
  };
  Catch* catch_ = nullptr;
};

const ::torch::autograd::Node* current_node() {
  thread_local NodeProbe probe;
  return probe.current();
}

// One op call being observed: what the fallback keeps from before the op runs for after it.
struct OpCall {
  const OpInfo* info = nullptr;
  Phase phase = Phase::forward;
  std::uint32_t module = 0;
  bool observe = false;
  bool inputs_overflow = false;     // more floating inputs than kMaxInputs: finiteness unknown
  std::int8_t written_finite = -1;  // -1: no in-place input; else whether it was finite before
  std::uint8_t input_count = 0;
  std::array<at::Tensor, kMaxInputs> inputs;
};

void on_op(const c10::OperatorHandle& op, c10::DispatchKeySet keys, ::torch::jit::Stack* stack);
void register_hot_ops(::torch::Library& library);
std::unique_ptr<at::ObserverContext> on_range_start(const at::RecordFunction& fn);
void on_range_end(const at::RecordFunction& fn, at::ObserverContext* context);

// Note [Views pass through]: ops that only return views of their inputs (view, t, select,
// expand, ...; a quarter of the ops a step calls) have nothing to observe, so they skip on_op
// altogether: each gets a fallthrough kernel for kModeKey, and the dispatcher leaves the key out
// of their dispatch (no boxing). So do the in-place views (tag inplace_view: detach_, squeeze_,
// t_, ...; zero_grad calls detach_ on every gradient), which change only a tensor's metadata, and
// aten::zero_ (zero_grad's other op), whose output is zeros.
// Ops registered after the first attach are intercepted as usual.
void let_views_pass(std::vector<std::unique_ptr<::torch::Library>>& libraries) {
  auto& dispatcher = c10::Dispatcher::singleton();
  std::map<std::string, std::vector<std::string>> views;  // namespace -> "name.overload"
  for (const auto& name : dispatcher.getAllOpNames()) {
    const auto op = dispatcher.findSchema(name);
    // In-place views (detach_, squeeze_, t_, ...) change only self's metadata, never its values.
    if (!op || !(describe_op(op->schema()).views_only || op->hasTag(at::Tag::inplace_view) ||
                 name.name == "aten::zero_"))
      continue;
    const auto colons = name.name.find("::");
    if (colons == std::string::npos) continue;
    std::string local = name.name.substr(colons + 2);
    if (!name.overload_name.empty()) local += "." + name.overload_name;
    views[name.name.substr(0, colons)].push_back(std::move(local));
  }
  for (const auto& [ns, names] : views) {
    libraries.push_back(
        std::make_unique<::torch::Library>(::torch::Library::IMPL, ns, kModeKey, __FILE__, __LINE__));
    for (const auto& local : names) {
      try {
        libraries.back()->impl(local.c_str(), ::torch::CppFunction::makeFallthrough());
      } catch (const std::exception&) {
        // Left intercepted: on_op skips a view's outputs anyway.
      }
    }
  }
}

// Registers on_op as the process's fallback for kModeKey, once (Note [Interception]).
void register_fallback() {
  static std::once_flag once;
  static std::string failure;
  std::call_once(once, [] {
    // Never destroyed: the registrations live as long as the process.
    static auto* libraries = new std::vector<std::unique_ptr<::torch::Library>>();
    try {
      libraries->push_back(
          std::make_unique<::torch::Library>(::torch::Library::IMPL, "_", kModeKey, __FILE__, __LINE__));
      libraries->back()->fallback(::torch::CppFunction::makeFromBoxedFunction<&on_op>());
      let_views_pass(*libraries);
      libraries->push_back(
          std::make_unique<::torch::Library>(::torch::Library::IMPL, "aten", kModeKey, __FILE__, __LINE__));
      register_hot_ops(*libraries->back());
    } catch (const std::exception& e) {
      failure = e.what();
    }
  });
  if (!failure.empty()) {
    throw Error(
        "tfdebug::torch::attach: cannot register the op fallback for the dispatch key "
        "TESTING_ONLY_GenericMode (does something else in this process use it?): " +
        failure);
  }
}

}  // namespace

// ---- The attachment ------------------------------------------------------------------------------

namespace detail {

struct Parameter {
  std::uint32_t name = 0;    // interned full name, "blocks.0.attn.q.weight"
  std::uint32_t module = 0;  // interned module path, "blocks.0.attn.q"
  at::Tensor tensor;
  // The value at step_begin (track_updates); step_end turns it into the update (new - old).
  std::vector<std::byte> before;
  bool before_is_value = false;  // false once step_end made it the update
  // What the sink said of its values at step_begin and of its gradient this step (Note
  // [Optimizer]); nullopt when it did not read them or they were not observed.
  std::optional<bool> value_finite;
  std::optional<bool> gradient_finite;
};

struct AttachState {
  ObservationSink* sink = nullptr;
  AttachOptions options;
  // Note [Op steps]: ops are intercepted only in the steps that observe them (diagnose: every
  // step; watch: every options.watch_outputs_every steps), on the thread that calls step_begin.
  bool intercepting = false;
  std::optional<at::CallbackHandle> ranges;  // user scopes, while intercepting

  void set_interception(bool on) {
    c10::impl::tls_set_dispatch_key_included(kModeKey, on);  // this thread's, whichever it is
    if (on == intercepting) return;
    intercepting = on;
    if (on) {
      ranges = at::addGlobalCallback(
          at::RecordFunctionCallback(&on_range_start, &on_range_end).scopes({at::RecordScope::USER_SCOPE}));
    } else if (ranges) {
      at::removeCallback(*ranges);
      ranges.reset();
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

  // The sink's answer: whether the values were all finite, when it read them. When it answers
  // pause, the pause happens here (Note [Pause channel] in src/session/session.cpp), with
  // `inputs` (the op's kept inputs) alive.
  std::optional<bool> deliver(const Observation& observation, std::span<const at::Tensor> inputs = {}) {
    try {
      const Verdict verdict = sink->observe(observation);
      observed.fetch_add(1, std::memory_order_relaxed);
      if (verdict.pause) pause(observation, inputs);
      return verdict.finite;
    } catch (...) {
      sink_failures.fetch_add(1, std::memory_order_relaxed);
      return std::nullopt;
    }
  }
  void pause(const Observation& observation, std::span<const at::Tensor> inputs);

  void observe_gradients() {
    const auto now = step.load(std::memory_order_relaxed);
    for (auto& p : parameters) {
      auto view = view_of(p.tensor.grad());
      if (!view) continue;
      p.gradient_finite = deliver({now, Phase::backward, Role::gradient, paths().path(p.module),
                                   paths().path(p.name), *view, std::nullopt});
    }
  }
};

// Note [Pause channel]: the adapter's pause point. The op's output and the inputs it kept are
// alive for the whole pause, and so is every parameter (and its gradient).
class TorchPausePoint final : public PausePoint {
 public:
  TorchPausePoint(const AttachState& state, const Observation& o, std::span<const at::Tensor> inputs)
      : state_(state), observation_(o) {
    for (const at::Tensor& t : inputs) {
      if (auto view = view_of(t)) inputs_.push_back(*view);
    }
  }
  const Observation& observation() const noexcept override { return observation_; }
  std::span<const TensorView> inputs() const noexcept override { return inputs_; }
  std::vector<std::string> tensor_names() const override {
    std::vector<std::string> names;
    for (const Parameter& p : state_.parameters) {
      names.emplace_back(paths().path(p.name));
      if (p.tensor.grad().defined()) names.push_back(names.back() + ".grad");
    }
    return names;
  }
  std::optional<TensorView> tensor(std::string_view name) const override {
    const bool gradient = name.size() > 5 && name.substr(name.size() - 5) == ".grad";
    const std::string_view parameter = gradient ? name.substr(0, name.size() - 5) : name;
    for (const Parameter& p : state_.parameters) {
      if (paths().path(p.name) == parameter) return view_of(gradient ? p.tensor.grad() : p.tensor);
    }
    return std::nullopt;
  }

 private:
  const AttachState& state_;
  const Observation& observation_;
  std::vector<TensorView> inputs_;
};

void AttachState::pause(const Observation& observation, std::span<const at::Tensor> inputs) {
  const TorchPausePoint point(*this, observation, inputs);
  sink->pause(point);  // blocks for as long as the sink wants; deliver() catches what it throws
}

}  // namespace detail

namespace {

std::atomic<detail::AttachState*> g_state{nullptr};

// Note [Gradients once]
// A parameter's gradient is judged once, as Role::gradient after backward (observe_gradients).
// The ops of the AccumulateGrad nodes that write it into .grad (an add_ per parameter when the
// gradients were zeroed, a clone or nothing otherwise) add nothing to that but their cost, so
// they run unobserved (on_op only redispatches them). What they read was observed as the output
// of the backward op that made it; a value they overflow shows in the gradient.

// Note [Current node]: what the node an op runs in means for it, cached for the node's next ops.
void enter_node(const detail::AttachState& s, ThreadState& t, const ::torch::autograd::Node& node) {
  if (&node == t.node && node.sequence_nr() == t.node_sequence) return;
  t.node = &node;
  t.node_sequence = node.sequence_nr();
  // Note [Gradients once]
  t.node_accumulates =
      t.node_sequence == UINT64_MAX && typeid(node) == typeid(::torch::autograd::AccumulateGrad);
  // A node of a view (Note [Views pass through]) has no module: it takes the module of the
  // forward op just before it.
  std::uint32_t module = 0;
  const auto sequence = static_cast<std::int64_t>(t.node_sequence);
  for (std::int64_t back = 0; module == 0 && back < 8 && sequence - back >= 0; ++back) {
    module = s.sequence_modules.module_of(sequence - back);
  }
  t.node_module = module;
  t.last_backward_module = module;
}

// `schema`: the registered op's, stable while it lives. A direct-mapped cache by address in
// front of the map (whose values never move).
const OpInfo& op_info(ThreadState& t, const c10::FunctionSchema& schema) {
  const auto address = reinterpret_cast<std::uintptr_t>(&schema);
  auto& slot = t.recent_ops[((address >> 4) * 0x9E3779B97F4A7C15ULL) >> (64 - 8)];
  if (slot.first == &schema) return *slot.second;
  auto it = t.ops.find(&schema);
  if (it == t.ops.end()) it = t.ops.emplace(&schema, describe_op(schema)).first;
  slot = {&schema, &it->second};
  return it->second;
}

// Note [Seen once]: the entry for `tensor` at its current version, or for a live tensor whose
// memory it is (same first element, count and type, both contiguous) and that has not changed
// since it was seen; nullptr when there is none.
SeenTensor* find_seen(ThreadState& t, const at::Tensor& tensor) {
  const c10::TensorImpl* impl = tensor.unsafeGetTensorImpl();
  const c10::StorageImpl* storage = nullptr;
  int by_memory = -1;  // whether `tensor` can match by memory; -1: not looked at yet
  // Newest first: of two entries for the same memory (written through tensors that do not share
  // a version counter), the later write's.
  for (std::size_t k = 1; k <= kSeen; ++k) {
    SeenTensor& seen = t.seen[(t.seen_next + kSeen - k) % kSeen];
    const c10::TensorImpl* other = seen.impl._unsafe_get_target();
    if (other == impl) {
      if (seen.version == tensor._version()) return &seen;
      by_memory = 0;  // changed since it was seen: no older entry describes its memory either
      continue;
    }
    if (seen.storage == nullptr || by_memory == 0) continue;
    if (by_memory < 0) {  // first time needed
      storage = contiguous_storage(*impl);
      by_memory = storage != nullptr ? 1 : 0;
      if (by_memory == 0) continue;
    }
    // The same memory, still the other tensor's (alive) and unchanged since it was seen.
    if (seen.storage == storage && seen.offset == impl->storage_offset() && seen.numel == impl->numel() &&
        seen.dtype == tensor.scalar_type() && seen.impl.use_count() > 0 &&
        other->version_counter().current_version() == seen.version)
      return &seen;
  }
  return nullptr;
}

// Keeps references to the op's floating-point inputs (Note [Producer or propagator]); an input
// the op writes in place is scanned now, before the op overwrites it, unless an earlier op of
// the step made it and the sink said then whether it was finite (Adam's exp_avg.mul_(b).add_(g)).
void keep_inputs(ThreadState& t, OpCall& call, c10::ArrayRef<c10::IValue> arguments) {
  for (std::size_t i = 0; i < arguments.size(); ++i) {
    const auto& value = arguments[i];
    auto keep = [&](const at::Tensor& tensor, bool written) {
      if (!tensor.defined() || !tensor.is_floating_point()) return;
      if (written) {
        const SeenTensor* seen = find_seen(t, tensor);
        bool finite = true;
        if (seen != nullptr && seen->finite >= 0) {
          finite = seen->finite == 1;
        } else {
          auto view = view_of(tensor);
          finite = !view || all_finite(*view);
        }
        call.written_finite = std::int8_t(call.written_finite == 0 ? 0 : (finite ? 1 : 0));
        return;
      }
      if (call.input_count == kMaxInputs) {
        call.inputs_overflow = true;
        return;
      }
      call.inputs[call.input_count++] = tensor;
    };
    if (i < 64 && ((call.info->overwritten_inputs >> i) & 1U)) continue;
    const bool written = i < 64 && ((call.info->written_inputs >> i) & 1U);
    if (value.isTensor()) {
      keep(value.toTensor(), written);
    } else if (value.isTensorList()) {
      const auto list = value.toTensorList();
      for (std::size_t j = 0; j < list.size(); ++j) keep(list.get(j), false);
    }
  }
}

// Before the op runs: its phase and module, and whether (and what) to observe. Returns false
// when there is nothing to do after the op but remember its autograd nodes' module.
// `stack`: the op's arguments last (the boxed fallback's stack, or the tensors an unboxed kernel
// was called with, Note [Unboxed hot ops]).
void prepare(detail::AttachState& s, ThreadState& t, const c10::FunctionSchema& schema,
             c10::ArrayRef<c10::IValue> stack, OpCall& call) {
  const auto generation = s.generation.load(std::memory_order_relaxed);
  if (t.generation != generation) {
    t.generation = generation;
    t.last_module = 0;
    t.last_backward_module = 0;
    t.node = nullptr;
    for (auto& seen : t.seen) seen = SeenTensor{};
  }
  s.ops.fetch_add(1, std::memory_order_relaxed);
  const bool diagnose = s.tier.load(std::memory_order_relaxed) == Tier::diagnose;
  call.info = &op_info(t, schema);
  if (call.info->arguments > stack.size()) {  // not the stack the schema describes: leave it
    call.info = nullptr;
    return;
  }
  const auto arguments = stack.slice(stack.size() - call.info->arguments);
  // Views get their module (for the autograd nodes they create) and nothing else: no parameter
  // lookup, no inputs kept.
  const bool views_only = call.info->views_only;
  std::uint32_t parameter_module = 0;
  const ::torch::autograd::Node* node = current_node();
  if (node != nullptr || ::torch::autograd::get_current_graph_task_nodes_in_graph() != nullptr) {
    call.phase = Phase::backward;
    if (!s.backward_seen.load(std::memory_order_relaxed)) s.backward_seen.store(true);
    if (node != nullptr) {
      enter_node(s, t, *node);
      if (t.node_accumulates) {  // Note [Gradients once]
        call.info = nullptr;
        return;
      }
    }
    // Between nodes (the engine summing gradients): the last node's.
    call.module = node != nullptr ? t.node_module : t.last_backward_module;
    if (!diagnose) return;  // watch observes no backward op
  } else {
    if (s.backward_seen.load(std::memory_order_relaxed) && !c10::GradMode::is_enabled()) {
      call.phase = Phase::optimizer;
      if (s.gradients_pending.load(std::memory_order_relaxed) && s.gradients_pending.exchange(false)) {
        s.observe_gradients();
      }
      if (!s.options.optimizer_ops) {  // Note [Optimizer]: the rest of the step runs as is
        c10::impl::tls_set_dispatch_key_included(kModeKey, false);
        call.info = nullptr;
        return;
      }
    }
    parameter_module = views_only ? 0 : detail::module_of_inputs(s.module_of_storage, arguments);
    if (call.phase == Phase::optimizer) {
      call.module = parameter_module;
    } else {
      call.phase = Phase::forward;
      if (parameter_module != 0) {
        t.last_module = parameter_module;
        call.module = parameter_module;
      } else {
        call.module = t.scopes.empty() ? t.last_module : t.scopes.back();
      }
    }
    // watch: the outputs of the forward ops that read a parameter (the parameterised layers)
    if (!diagnose && !(call.phase == Phase::forward && parameter_module != 0)) return;
  }
  if (views_only) {
    s.skipped_views.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  if (call.info->uninitialised) {
    s.skipped_uninitialised.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  call.observe = true;
  keep_inputs(t, call, arguments);
}

// Note [Seen once]: nullptr when `tensor` was seen at this version; else its new entry.
SeenTensor* first_sight(ThreadState& t, const at::Tensor& tensor) {
  if (find_seen(t, tensor) != nullptr) return nullptr;
  auto& slot = t.seen[t.seen_next];
  t.seen_next = (t.seen_next + 1) % kSeen;
  slot.impl = c10::weak_intrusive_ptr<c10::TensorImpl, c10::UndefinedTensorImpl>(tensor.getIntrusivePtr());
  slot.version = tensor._version();
  slot.finite = -1;
  slot.storage = contiguous_storage(*tensor.unsafeGetTensorImpl());
  slot.offset = tensor.storage_offset();
  slot.numel = tensor.numel();
  slot.dtype = tensor.scalar_type();
  return &slot;
}

// Note [Producer or propagator]: the inputs kept before the op ran, scanned only when a consumer
// found an output non-finite and asks.
class CallInputs final : public InputsCheck {
 public:
  explicit CallInputs(const OpCall& call) : call_(call) {}
  std::optional<bool> inputs_finite() const override {
    if (call_.inputs_overflow) return std::nullopt;
    if (call_.written_finite == 0) return false;
    for (std::size_t i = 0; i < call_.input_count; ++i) {
      auto view = view_of(call_.inputs[i]);
      if (view && !all_finite(*view)) return false;
    }
    return true;
  }

 private:
  const OpCall& call_;
};

void observe_output(detail::AttachState& s, ThreadState& t, const OpCall& call, const at::Tensor& tensor,
                    std::size_t index) {
  if (index < 64 && ((call.info->view_outputs >> index) & 1U)) {
    s.skipped_views.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  auto view = view_of(tensor);
  if (!view) return;
  SeenTensor* seen = first_sight(t, tensor);
  if (seen == nullptr) {
    s.skipped_duplicates.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  const CallInputs inputs(call);
  std::optional<TensorView> input;
  if (call.info->gelu && call.input_count > 0) input = view_of(call.inputs[0]);
  const auto finite =
      s.deliver({s.step.load(std::memory_order_relaxed), call.phase, Role::output, paths().path(call.module),
                 call.info->name, *view, std::nullopt, &inputs, input ? &*input : nullptr},
                std::span<const at::Tensor>(call.inputs.data(), call.input_count));
  // (A sink that ran ops of its own, with nested_ops, may have reused the entry meanwhile.)
  if (finite && seen->impl._unsafe_get_target() == tensor.unsafeGetTensorImpl() &&
      seen->version == tensor._version())
    seen->finite = *finite ? 1 : 0;
}

const c10::DispatchKeySet kAfterMode(c10::DispatchKeySet::FULL_AFTER, kModeKey);

// After the op ran: its autograd nodes' module, then its outputs (for_each_output(f) calls
// f(tensor, return index) for each).
template <typename ForEachOutput>
void after_op(detail::AttachState& s, ThreadState& t, const OpCall& call, std::uint64_t first_sequence,
              const ForEachOutput& for_each_output) {
  if (call.info == nullptr) return;
  if (call.phase == Phase::forward) {
    // Note [Module of an op]: the autograd nodes this op made (its inner ops' too) are its module's.
    const std::uint64_t end = at::sequence_number::peek();
    for (std::uint64_t n = first_sequence; n < end && n < first_sequence + 4096; ++n) {
      s.sequence_modules.remember(std::int64_t(n), call.module);
    }
  }
  if (!call.observe) return;
  try {
    for_each_output(
        [&](const at::Tensor& tensor, std::size_t index) { observe_output(s, t, call, tensor, index); });
  } catch (...) {
    s.sink_failures.fetch_add(1, std::memory_order_relaxed);
  }
}

// The boxed fallback for kModeKey: every op the intercepting thread calls (Note [Interception]).
void on_op(const c10::OperatorHandle& op, c10::DispatchKeySet keys, ::torch::jit::Stack* stack) {
  detail::AttachState* s = g_state.load(std::memory_order_acquire);
  // Note [Outer ops only]: the ops this op calls do not come back here, unless asked for.
  std::optional<c10::impl::ExcludeDispatchKeyGuard> outer_only;
  if (s == nullptr || !s->options.nested_ops) outer_only.emplace(kModeKey);
  if (s == nullptr || !s->in_step.load(std::memory_order_relaxed)) {
    op.redispatchBoxed(keys & kAfterMode, stack);
    return;
  }
  ThreadState& t = thread_state();
  OpCall call;
  try {
    prepare(*s, t, op.schema(), *stack, call);
  } catch (...) {
    call.observe = false;
  }
  const std::uint64_t first_sequence = at::sequence_number::peek();
  op.redispatchBoxed(keys & kAfterMode, stack);  // the op itself; what it throws is the caller's
  after_op(*s, t, call, first_sequence, [&](const auto& observe) {
    if (call.info->returns > stack->size()) return;
    const auto outputs = ::torch::jit::last(*stack, call.info->returns);
    for (std::size_t i = 0; i < outputs.size(); ++i) {
      if (outputs[i].isTensor()) {
        observe(outputs[i].toTensor(), i);
      } else if (outputs[i].isTensorList()) {
        const auto list = outputs[i].toTensorList();
        for (std::size_t j = 0; j < list.size(); ++j) observe(list.get(j), i);
      }
    }
  });
}

// Note [Unboxed hot ops]
// The boxed fallback boxes every argument onto a stack (IntArrayRefs and Scalars into
// heap-allocated IValues), and the kernel it redispatches to unboxes them again: ~3% of the demo
// step for its 189 intercepted ops, with on_op doing nothing but redispatch (measured against the
// same build without the mode key). The ops a transformer's training step calls most (linear
// algebra, elementwise arithmetic, norms, softmax, activations and their backward ops) get an
// unboxed kernel for kModeKey instead, generated from the op's at::_ops signature: it puts only
// the tensor arguments on a small stack of IValues for prepare (a reference count each, no
// allocation), calls the op through its typed redispatch, and observes the returned tensors as
// they are. Every other op still reaches on_op.
template <class Op, class Signature = typename Op::schema>
struct Unboxed;

template <class Op, class R, class... A>
struct Unboxed<Op, R(A...)> {
  static constexpr std::size_t kArguments = sizeof...(A);

  // The tensors among the arguments, by position; every other argument is None.
  template <typename T>
  static c10::IValue tensor_only(const T& value) {
    using U = std::decay_t<T>;
    if constexpr (std::is_same_v<U, at::Tensor>) {
      return c10::IValue(value);
    } else if constexpr (std::is_same_v<U, c10::optional<at::Tensor>>) {
      return value.has_value() ? c10::IValue(*value) : c10::IValue();
    } else {
      return c10::IValue();
    }
  }

  template <typename F>
  static void for_each_tensor(const R& result, const F& f) {
    using U = std::decay_t<R>;
    if constexpr (std::is_same_v<U, at::Tensor>) {
      f(result, 0);
    } else {
      std::size_t index = 0;
      std::apply([&](const auto&... parts) { ((f(parts, index++)), ...); }, result);
    }
  }

  static const c10::FunctionSchema& schema() {
    static const c10::FunctionSchema& s =
        c10::Dispatcher::singleton().findSchemaOrThrow(Op::name, Op::overload_name).schema();
    return s;
  }

  static R call(c10::DispatchKeySet keys, A... args) {
    detail::AttachState* s = g_state.load(std::memory_order_acquire);
    std::optional<c10::impl::ExcludeDispatchKeyGuard> outer_only;  // Note [Outer ops only]
    if (s == nullptr || !s->options.nested_ops) outer_only.emplace(kModeKey);
    if (s == nullptr || !s->in_step.load(std::memory_order_relaxed)) {
      return Op::redispatch(keys & kAfterMode, std::forward<A>(args)...);
    }
    ThreadState& t = thread_state();
    OpCall call;
    try {
      const std::array<c10::IValue, kArguments> tensors{tensor_only(args)...};
      prepare(*s, t, schema(), tensors, call);
    } catch (...) {
      call.observe = false;
    }
    const std::uint64_t first_sequence = at::sequence_number::peek();
    R result = Op::redispatch(keys & kAfterMode, std::forward<A>(args)...);
    after_op(*s, t, call, first_sequence, [&](const auto& observe) { for_each_tensor(result, observe); });
    return result;
  }

  static void register_in(::torch::Library& library) {
    std::string name = std::string(Op::name).substr(std::string_view("aten::").size());
    if (std::string_view(Op::overload_name).size() > 0) name += std::string(".") + Op::overload_name;
    library.impl(name.c_str(), ::torch::CppFunction::makeFromUnboxedFunction(TORCH_FN(call)));
  }
};

// Each registration on its own: an op this LibTorch lacks or rejects stays with on_op.
template <class... Ops>
void register_unboxed(::torch::Library& library) {
  (
      [&] {
        try {
          Unboxed<Ops>::register_in(library);
        } catch (const std::exception&) {
        }
      }(),
      ...);
}

// Note [Unboxed hot ops]: what the demo model's step and Adam (with optimizer_ops) call most, and
// the other common activations and losses.
void register_hot_ops(::torch::Library& library) {
  register_unboxed<at::_ops::add_Tensor, at::_ops::add__Tensor, at::_ops::sub_Tensor, at::_ops::mul_Tensor,
                   at::_ops::mul__Tensor, at::_ops::mul__Scalar, at::_ops::div_Tensor, at::_ops::div_Scalar,
                   at::_ops::mm, at::_ops::bmm, at::_ops::matmul, at::_ops::addmm, at::_ops::linear,
                   at::_ops::sum_dim_IntList, at::_ops::mean_dim, at::_ops::clone, at::_ops::_unsafe_view,
                   at::_ops::layer_norm, at::_ops::native_layer_norm_backward, at::_ops::relu, at::_ops::gelu,
                   at::_ops::gelu_backward, at::_ops::threshold_backward, at::_ops::tanh,
                   at::_ops::tanh_backward, at::_ops::sigmoid, at::_ops::sigmoid_backward,
                   at::_ops::softmax_int, at::_ops::_softmax_backward_data, at::_ops::log_softmax_int,
                   at::_ops::_log_softmax_backward_data, at::_ops::embedding, at::_ops::embedding_backward,
                   at::_ops::dropout, at::_ops::cross_entropy_loss, at::_ops::nll_loss_backward,
                   at::_ops::sqrt, at::_ops::addcmul_, at::_ops::addcdiv_>(library);
}

// User scopes (RECORD_USER_SCOPE), from the RecordFunction ranges around them.
std::unique_ptr<at::ObserverContext> on_range_start(const at::RecordFunction& fn) {
  try {
    thread_state().scopes.push_back(paths().intern(fn.name()));
  } catch (...) {
  }
  return nullptr;
}

void on_range_end(const at::RecordFunction& /*fn*/, at::ObserverContext* /*context*/) {
  auto& scopes = thread_state().scopes;
  if (!scopes.empty()) scopes.pop_back();
}

void copy_values(const at::Tensor& tensor, std::vector<std::byte>& into) {
  into.resize(std::size_t(tensor.numel()) * tensor.element_size());
  std::memcpy(into.data(), tensor.data_ptr(), into.size());
}

// before[i] = now[i] - before[i]: the update, in place (a third buffer, cold by step_end, cost
// as much again to write).
template <typename T>
void subtract_from(const std::byte* now, std::byte* before, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) {
    T a;
    T b;
    std::memcpy(&a, now + i * sizeof(T), sizeof(T));
    std::memcpy(&b, before + i * sizeof(T), sizeof(T));
    const T d = a - b;
    std::memcpy(before + i * sizeof(T), &d, sizeof(T));
  }
}

bool trackable(const at::Tensor& tensor) {
  return tensor.is_cpu() && tensor.is_contiguous() &&
         (tensor.scalar_type() == at::kFloat || tensor.scalar_type() == at::kDouble);
}

}  // namespace

// ---- Attachment ----------------------------------------------------------------------------------

Attachment attach(ObservationSink& sink, ::torch::nn::Module& module, const AttachOptions& options) {
  register_fallback();
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
  state_->set_interception(false);
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
  s.set_interception(tier == Tier::diagnose || step % every == 0);
  s.step.store(step);
  s.generation.fetch_add(1);
  s.backward_seen.store(false);
  s.gradients_pending.store(true);
  for (auto& p : s.parameters) {
    p.gradient_finite.reset();
    p.value_finite.reset();
    p.before_is_value = false;
    auto view = view_of(p.tensor);
    if (!view) continue;
    p.value_finite = s.deliver({step, Phase::forward, Role::parameter, paths().path(p.module),
                                paths().path(p.name), *view, std::nullopt});
    if (s.options.track_updates && trackable(p.tensor)) {
      copy_values(p.tensor, p.before);
      p.before_is_value = true;
    }
  }
  s.in_step.store(true);
}

void Attachment::step_end(std::int64_t step, std::optional<double> loss) {
  if (!state_) throw Error("tfdebug::torch: step_end on a detached attachment");
  auto& s = *state_;
  s.in_step.store(false);
  // Without interception this step, backward went unseen: the gradients are read here.
  const bool backward = s.backward_seen.load() || !s.intercepting;
  if (backward && s.gradients_pending.exchange(false)) s.observe_gradients();
  if (s.options.track_updates && backward) {
    for (auto& p : s.parameters) {
      if (!trackable(p.tensor) || !p.before_is_value ||
          p.before.size() != std::size_t(p.tensor.numel()) * p.tensor.element_size()) {
        continue;
      }
      p.before_is_value = false;
      const auto* now = static_cast<const std::byte*>(p.tensor.data_ptr());
      if (p.tensor.scalar_type() == at::kFloat) {
        subtract_from<float>(now, p.before.data(), std::size_t(p.tensor.numel()));
      } else {
        subtract_from<double>(now, p.before.data(), std::size_t(p.tensor.numel()));
      }
      auto shape = p.tensor.sizes();
      if (shape.size() > std::size_t(kMaxRank)) continue;
      TensorView update(p.before.data(), *dtype_of(p.tensor.scalar_type()),
                        std::span<const std::int64_t>(shape.data(), shape.size()));
      // Note [Optimizer]: the update's inputs, unless the optimizer's own ops were observed.
      std::optional<bool> inputs_finite;
      if (!(s.options.optimizer_ops && s.intercepting) && p.value_finite && p.gradient_finite)
        inputs_finite = *p.value_finite && *p.gradient_finite;
      s.deliver({step, Phase::optimizer, Role::update, paths().path(p.module), paths().path(p.name), update,
                 inputs_finite});
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
