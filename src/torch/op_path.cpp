// Around each intercepted op: phase, module, the inputs kept for the producer check, the outputs.
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
// Note [Channels]
// The dead-unit rule needs to know which dimension of an output holds its units: the features of a
// linear layer are its last dimension, the channels of a convolution (N, C, H, W) its dimension 1,
// and so are those of what follows a convolution (batch_norm, relu, pooling) until the model
// leaves the convolutional part. Each thread keeps a flag, set by a convolution and cleared by
// the next op that reads a parameter and is neither a convolution nor a normalisation of channels
// (a linear layer, a layer_norm, an embedding); outputs observed while it is set have
// Observation::unit_dim 1. A model that permutes a convolution's output to channels-last before
// more parameter-free ops has those ops' units misread (its next layer clears the flag).
//
// Note [Optimizer]
// An optimizer's step is hundreds of small elementwise ops (Adam: 8 per parameter, 304 a step on
// the demo model, against 151 forward and backward ops), and interception costs each op the
// same fixed price whatever its size. What they compute is judged per parameter instead: the update (new -
// old, at step_end) with whether the parameter (step_begin) and its gradient (after backward) were finite, so
// that an update that went non-finite from finite inputs is the optimizer's own doing
// (Monitors::check_nonfinite). So at the first optimizer op (which observes the gradients) the thread stops
// intercepting until the next step_begin, unless AttachOptions::optimizer_ops asks for the ops or the loop
// was seen running a backward after an optimizer (Note [A backward after the optimizer] in attach.cpp:
// its optimizer's ops then run unobserved, so that the forward after them is observed). Ops between
// backward and the optimizer that run without grad mode (gradient clipping) count as the optimizer's.
#include "op_path.hpp"

#include <c10/core/GradMode.h>
#include <torch/csrc/autograd/functions/accumulate_grad.h>
#include <torch/csrc/autograd/graph_task.h>

#include <typeinfo>

#include "current_node.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/core/stats.hpp"

namespace tfdebug::torch::detail {

namespace {

// Note [Gradients once]
// A parameter's gradient is judged once, as Role::gradient after backward (observe_gradients).
// The ops of the AccumulateGrad nodes that write it into .grad (an add_ per parameter when the
// gradients were zeroed, a clone or nothing otherwise) add nothing to that but their cost, so
// they run unobserved (on_op only redispatches them). What they read was observed as the output
// of the backward op that made it; a value they overflow shows in the gradient.

// Note [Current node]: what the node an op runs in means for it, cached for the node's next ops.
void enter_node(const AttachState& s, ThreadState& t, const ::torch::autograd::Node& node) {
  if (&node == t.node && node.sequence_nr() == t.node_sequence) return;
  t.node = &node;
  t.node_sequence = node.sequence_nr();
  // Note [Gradients once]
  t.node_accumulates =
      t.node_sequence == UINT64_MAX && typeid(node) == typeid(::torch::autograd::AccumulateGrad);
  // A node of a view (Note [Views pass through]) has no module: it takes the module of the
  // forward op just before it.
  const std::uint32_t module =
      backward_module(s.sequence_modules, static_cast<std::int64_t>(t.node_sequence));
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
          if (!finite) {  // which kinds is not known: both, of unknown origin
            call.written_kinds.nan += 1;
            call.written_kinds.inf += 1;
          }
        } else if (auto view = view_of(tensor)) {
          finite = all_finite(*view);
          if (!finite) {  // rare: the counts, for the producer check
            const Stats stats = compute_stats(*view);
            call.written_kinds.nan += stats.nan;
            call.written_kinds.inf += stats.pos_inf + stats.neg_inf;
          }
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

}  // namespace

// Before the op runs: its phase and module, and whether (and what) to observe. Returns false
// when there is nothing to do after the op but remember its autograd nodes' module.
// `stack`: the op's arguments last (the boxed fallback's stack, or the tensors an unboxed kernel
// was called with, Note [Unboxed hot ops]).
void prepare(AttachState& s, ThreadState& t, const c10::FunctionSchema& schema,
             c10::ArrayRef<c10::IValue> stack, OpCall& call) {
  const auto generation = s.generation.load(std::memory_order_relaxed);
  if (t.generation != generation) {
    t.generation = generation;
    t.last_module = 0;
    t.last_backward_module = 0;
    t.sequence_end = UINT64_MAX;
    t.node = nullptr;
    t.channels_first = false;
    t.after_optimizer = false;
    for (auto& seen : t.seen) seen = SeenTensor{};
  }
  call.info = &op_info(t, schema);
  if (call.info->nothing_to_observe) {  // Note [Nothing to observe] (op_info.cpp): not registered unboxed
    call.info = nullptr;
    return;
  }
  s.ops.fetch_add(1, std::memory_order_relaxed);
  const bool diagnose = s.tier.load(std::memory_order_relaxed) == Tier::diagnose;
  // The boxed fallback's stack, or the unboxed kernel's arguments, hold at least the schema's.
  TFDEBUG_HOOK_CHECK(call.info->arguments <= stack.size(),
                     "an op's stack holds fewer values than its schema");
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
      call.node = node;
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
      t.after_optimizer = true;
      if (!s.options.optimizer_ops) {  // Note [Optimizer]: the rest of the step runs as is
        // Note [A backward after the optimizer] (attach.cpp): unless a forward may follow.
        if (!s.backward_after_optimizer.load(std::memory_order_relaxed))
          c10::impl::tls_set_dispatch_key_included(kModeKey, false);
        call.info = nullptr;
        return;
      }
    }
    parameter_module = views_only ? 0 : module_of_inputs(s.module_of_storage, arguments);
    if (call.phase == Phase::optimizer) {
      call.module = parameter_module;
    } else {
      call.phase = Phase::forward;
      if (t.after_optimizer) {  // Note [A step that moved its parameters] (replay.cpp)
        t.after_optimizer = false;
        observe_moved_parameters(s);
      }
      // Note [Channels]
      if (call.info->convolution)
        t.channels_first = true;
      else if (parameter_module != 0 && !call.info->channel_norm)
        t.channels_first = false;
      call.unit_dim = t.channels_first ? 1 : -1;
      // Note [Module of an op]: the one decision the profiler and the graph tracer take too.
      ModuleClues clues;
      clues.parameter = parameter_module;
      clues.scope = t.scopes.empty() ? 0 : t.scopes.back();
      clues.enclosed = t.enclosed;
      clues.enclosing = t.enclosing_module;
      clues.last_parameter = t.last_module;
      clues.op = call.info->name;
      call.module = forward_module(s.modules, clues);
      if (parameter_module != 0) t.last_module = parameter_module;
    }
    // watch: the outputs of the forward ops that read a parameter (the parameterised layers) and
    // of the activations after them
    if (!diagnose && !(call.phase == Phase::forward && (parameter_module != 0 || call.info->activation)))
      return;
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
  call.complete = diagnose;
  keep_inputs(t, call, arguments);
}

namespace {

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
//
// Note [Inputs from outside]
// What the inputs held, when asked: the counts of NaN and Inf, and of those the counts in inputs
// that came into the step from outside its ops (Note [The data is the producer] in
// src/session/rules/nonfinite.cpp): forward inputs with no autograd history that are no
// parameter, the batch or a buffer. Only when every op of the step is observed (diagnose): in
// watch, an unobserved op may have made the value without autograd (under NoGradGuard, from a
// frozen layer).
class CallInputs final : public InputsCheck {
 public:
  CallInputs(const AttachState& s, const OpCall& call) : state_(s), call_(call) {}
  std::optional<bool> inputs_finite() const override {
    if (call_.inputs_overflow) return std::nullopt;
    if (call_.written_finite == 0) return false;
    for (std::size_t i = 0; i < call_.input_count; ++i) {
      auto view = view_of(call_.inputs[i]);
      if (view && !all_finite(*view)) return false;
    }
    return true;
  }
  std::optional<InputKinds> input_kinds() const override {
    if (call_.inputs_overflow) return std::nullopt;
    InputKinds kinds = call_.written_kinds;
    for (std::size_t i = 0; i < call_.input_count; ++i) {
      const at::Tensor& input = call_.inputs[i];
      auto view = view_of(input);
      if (!view || all_finite(*view)) continue;
      const Stats stats = compute_stats(*view);
      const std::int64_t inf = stats.pos_inf + stats.neg_inf;
      kinds.nan += stats.nan;
      kinds.inf += inf;
      if (from_outside(input)) {
        kinds.outside_nan += stats.nan;
        kinds.outside_inf += inf;
      }
    }
    return kinds;
  }
  std::string autograd_node() const override { return call_.node != nullptr ? call_.node->name() : ""; }
  std::vector<TensorView> input_views() const override {
    std::vector<TensorView> views;
    for (std::size_t i = 0; i < call_.input_count; ++i) {
      if (auto view = view_of(call_.inputs[i])) views.push_back(*view);
    }
    return views;
  }

 private:
  bool from_outside(const at::Tensor& input) const {
    if (!call_.complete || call_.phase != Phase::forward || input.requires_grad() || input.grad_fn())
      return false;
    const auto& storage = input.unsafeGetTensorImpl()->unsafe_storage();
    return !storage || state_.module_of_storage.module_of(storage.data()) == 0;
  }

  const AttachState& state_;
  const OpCall& call_;
};

}  // namespace

void observe_output(AttachState& s, ThreadState& t, const OpCall& call, const at::Tensor& tensor,
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
  const CallInputs inputs(s, call);
  std::optional<TensorView> input;
  if (call.info->gelu && call.input_count > 0) input = view_of(call.inputs[0]);
  Observation o{s.step.load(std::memory_order_relaxed),
                call.phase,
                Role::output,
                module_paths().name(call.module),
                call.info->name,
                *view,
                std::nullopt,
                &inputs,
                input ? &*input : nullptr};
  o.filled = call.info->filled;
  o.unit_dim = call.info->activation ? call.unit_dim : Observation::kNoUnits;
  const auto finite = s.deliver(o, std::span<const at::Tensor>(call.inputs.data(), call.input_count));
  // (A sink that ran ops of its own, with nested_ops, may have reused the entry meanwhile.)
  if (finite && seen->impl._unsafe_get_target() == tensor.unsafeGetTensorImpl() &&
      seen->version == tensor._version())
    seen->finite = *finite ? 1 : 0;
}

void remember_sequences(AttachState& s, ThreadState& t, const OpCall& call, std::uint64_t first_sequence) {
  // Note [Module of an op]: the autograd nodes this op made (its inner ops' too) are its module's;
  // Note [A custom function's node]: and a custom function's made just before it.
  remember_module_after(s.sequence_modules, t.sequence_end, first_sequence, at::sequence_number::peek(),
                        call.module, at::GradMode::is_enabled());
}

}  // namespace tfdebug::torch::detail
