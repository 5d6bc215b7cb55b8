// Attach tfdebug to a LibTorch training loop with no change to the model: a dispatcher fallback
// sees every aten op that the thread calling step_begin runs in the forward and the backward
// (also on the autograd engine's threads; the optimizer step's too with
// AttachOptions::optimizer_ops), and hands what it sees to an
// ObservationSink (a tfdebug::Session, or any other sink). How, and why not RecordFunction:
// Note [Interception] in src/torch/interception.cpp and docs/live-debugging.md.
//
//   MyModel model;                                   // any torch::nn::Module
//   torch::optim::Adam optimizer(model->parameters(), 1e-3);
//   auto debug = tfdebug::torch::attach(sink, *model);
//   for (std::int64_t step = 0; step < steps; ++step) {
//     auto [x, y] = next_batch();                    // outside the step: it may run twice
//     debug.step(step, [&] {                         // throws only when sink.should_stop()
//       optimizer.zero_grad();
//       auto loss = loss_fn(model->forward(x), y);
//       loss.backward();
//       optimizer.step();
//       return loss.item<double>();
//     });
//   }                                                // `debug` detaches when it goes out of scope
//
// Handed the step as a callable, the adapter can replay it (Note [Replay] in src/torch/replay.cpp,
// docs/live-debugging.md): watch, the default tier, does not observe every op, so when a NaN or
// Inf shows in a watch step (a gradient after backward, or the loss) the step is stopped before
// the optimizer runs, the state it changed is put back (LibTorch's CPU random generator, the
// module buffers, the gradients) and the step runs again in diagnose, which names the op that
// produced the value. The run goes on from what one run of the step would have left. The markers
// step_begin / step_end work too, without the replay: a bad step then escalates the following
// steps to diagnose.
//
// What is observed, per tier (docs/live-debugging.md has the full account):
//   watch:    each step, every parameter's gradient after backward (Role::gradient); every
//             AttachOptions::watch_every steps also every parameter at step_begin
//             (Role::parameter), the optimizer's change new - old (Role::update), and the
//             forward outputs of the ops that read a parameter (the model's parameterised
//             layers: linear, embedding, layer_norm, ...) and of activation functions.
//   diagnose: also the output of every other op, in forward and backward. The optimizer's ops
//             are not intercepted (AttachOptions::optimizer_ops brings them back): its result
//             is judged per parameter, as the update; an update that went non-finite from a
//             finite parameter and gradient is reported as the optimizer's own doing.
// Module paths come from the module's named_modules() and from the parameters an op reads; ops
// that read none inherit the module of the last op on the same thread that did, or the innermost
// tfdebug::torch::Scope. Backward ops get the module of the forward op that created their
// autograd node (the sequence number both share).
//
// Only one attachment may be live at a time in a process; attach throws tfdebug::Error
// otherwise. The interception never throws into the training loop: a sink that throws from
// observe() is counted in Counters::sink_failures and the run goes on.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include "tfdebug/session/observation.hpp"

namespace torch::nn {
class Module;
}  // namespace torch::nn

namespace tfdebug::torch {

struct AttachOptions {
  // Record each floating-point parameter's value at step_begin so that step_end can observe
  // the update (new - old) with Role::update. Costs one copy of the parameters per step, in
  // time and in memory (step_end turns the copy into the update in place). Parameters that do
  // not require a gradient (frozen) have no update.
  bool track_updates = true;
  // Tier watch observes every gradient every step (the gradient rules judge each layer against
  // its recent steps), and samples the rest of a step (every parameter and its update, the
  // outputs of the model's layers and activations) in some steps: a NaN or Inf in any step still
  // shows in its gradients or its loss. Intercepting ops, and handing a small model's few dozen
  // tensors to the rules, cost about as much as a small model's whole step, so the samples are
  // spaced by what they cost (Note [Watch budget] in src/torch/watch_schedule.hpp): the first
  // step samples, then a step at least watch_every steps after the last sample once the other
  // steps have saved watch_budget of their time for it, and at the latest watch_every_max steps
  // after it. watch_budget 0: the fixed steps where step % watch_every == 0 (1: every step).
  // Tier diagnose observes every step regardless.
  std::int64_t watch_every = 10;
  double watch_budget = 0.01;
  std::int64_t watch_every_max = 50;
  // Observe the ops that run inside other ops too (aten::addmm inside aten::linear,
  // native_layer_norm inside layer_norm): finer names for a bad value, at about three times the
  // ops. Ops that only return views are never observed. Ops inside backward nodes are seen
  // either way.
  bool nested_ops = false;
  // Intercept the optimizer's ops too (phase optimizer: the ops that run without grad mode after
  // the step's backward). Off by default: an optimizer updates every parameter with the same
  // few elementwise ops (Adam: 8 per parameter, 304 a step on the demo model, against 151 forward
  // and backward ops), each paying the interception while adding little to what the update
  // already says (Note [Optimizer] in src/torch/op_path.cpp). On: the op inside the optimizer that
  // made a bad value is named (aten::addcdiv_ dividing by an eps of 0).
  bool optimizer_ops = false;
  // Attachment::step replays a watch step in diagnose when a NaN or Inf shows in it (Note
  // [Replay]). Costs every watch step a copy of the module buffers and of LibTorch's CPU random
  // generator state, a look at each gradient before the step (zero, or copied when the loop
  // carries gradients into the step) and one hook per parameter.
  bool replay = true;
};

namespace detail {
struct AttachState;
}  // namespace detail

// The live attachment. Destroying it (or detach()) stops the interception (the dispatcher
// fallback stays registered and passes ops through: the process cannot unregister it cheaply);
// safe while no training step runs on another thread. Call it on the thread that calls
// step_begin: that thread's dispatch keys are reset.
class Attachment {
 public:
  // What the interception did since attach; for tests and benchmarks.
  struct Counters {
    std::int64_t ops = 0;                    // aten ops seen inside steps
    std::int64_t observed = 0;               // tensors handed to the sink (all roles)
    std::int64_t skipped_views = 0;          // outputs that alias an input without writing it
    std::int64_t skipped_duplicates = 0;     // outputs already observed this step
    std::int64_t skipped_uninitialised = 0;  // outputs of empty*, resize_, set_
    std::int64_t sink_failures = 0;          // observe() or pause() calls that threw
    std::int64_t hook_failures = 0;          // the adapter's own bookkeeping around an op that threw
    std::int64_t replays = 0;                // steps Attachment::step ran again in diagnose
    std::int64_t sampled_steps = 0;          // steps that observed ops and parameters (see watch_every)
    bool last_step_sampled = false;          // whether the last step begun did
    std::string first_failure;               // what the first of either said ("" when none)
  };

  Attachment(Attachment&& other) noexcept;
  Attachment& operator=(Attachment&& other) noexcept;
  Attachment(const Attachment&) = delete;
  Attachment& operator=(const Attachment&) = delete;
  ~Attachment();

  // Step markers: map to sink.begin_step / sink.end_step. begin_step reads sink.tier() for the
  // step. Both throw tfdebug::Error when sink.should_stop() (the only time anything throws).
  void step_begin(std::int64_t step);
  void step_end(std::int64_t step, std::optional<double> loss = std::nullopt);

  // One training step as a callable: step_begin, fn(), step_end with fn's loss, replayed in
  // diagnose when watch sees a NaN or Inf in it (Note [Replay]). `fn` runs the forward, the
  // backward and the optimizer step, and returns the loss (a double, a std::optional<double>, a
  // tensor, or nothing); the step's loss is returned. For an exact replay, `fn` draws its random
  // numbers from LibTorch's default CPU generator and changes nothing but the model, its
  // gradients and the optimizer (draw the batch outside, or from that generator), and lets
  // exceptions pass. An exception from `fn` leaves the step unfinished and goes on to the caller.
  template <typename F>
  std::optional<double> step(std::int64_t step, F&& fn) {
    using R = std::invoke_result_t<F&>;
    return run_step(step, [&]() -> std::optional<double> {
      if constexpr (std::is_void_v<R>) {
        fn();
        return std::nullopt;
      } else if constexpr (requires(R r) { r.template item<double>(); }) {
        return fn().template item<double>();
      } else {
        return std::optional<double>(fn());
      }
    });
  }

  void detach() noexcept;
  bool attached() const noexcept { return state_ != nullptr; }
  Counters counters() const noexcept;

 private:
  friend Attachment attach(ObservationSink& sink, ::torch::nn::Module& module, const AttachOptions& options);
  explicit Attachment(std::unique_ptr<detail::AttachState> state);
  std::optional<double> run_step(std::int64_t step, const std::function<std::optional<double>()>& fn);
  std::unique_ptr<detail::AttachState> state_;
};

// Attaches to `module`'s parameters and to every op that runs between step_begin and step_end.
// `sink` and `module` must outlive the attachment.
[[nodiscard]] Attachment attach(ObservationSink& sink, ::torch::nn::Module& module,
                                const AttachOptions& options = {});

// Optional exact module names: ops that read no parameter while a Scope is alive on this
// thread run in `path` (ops that read a parameter keep the parameter's module).
//
//   tfdebug::torch::Scope scope("blocks.1.attn");
class Scope {
 public:
  explicit Scope(std::string_view path);
  ~Scope();
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;
};

}  // namespace tfdebug::torch
