// What producers hand to a Session: the LibTorch adapter (tfdebug::torch), the probe API, or any
// other framework. A producer calls begin_step, then observe for each tensor it sees (from any
// thread), then end_step. This is the whole contract between producers and the hub
// (../shared/DESIGN.md: one data path).
//
//   sink.begin_step(step);
//   sink.observe({step, tfdebug::Phase::forward, tfdebug::Role::output, "blocks.1.mlp", "aten::log",
//                 view, /*inputs_finite=*/true});   // or leave it empty and pass an InputsCheck
//   sink.end_step(step, loss);
//
// Pausing (Note [Pause channel] in src/session/session.cpp): a sink may answer an observation
// with Verdict::pause. The producer then calls sink.pause(point) at that safe point, on the
// observing thread, before it goes on: the call blocks the training thread for as long as the
// sink wants (a breakpoint, a console, a debug adapter), with the observed tensor, the op's
// inputs and the producer's named tensors alive and readable through the PausePoint.
//
//   tfdebug::Verdict v = sink.observe(observation);
//   if (v.pause) sink.pause(MyPausePoint(observation, inputs));   // returns when resumed
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tfdebug/core/phase.hpp"
#include "tfdebug/core/tensor_view.hpp"

namespace tfdebug {

// What the observed tensor is.
enum class Role : std::uint8_t {
  output,     // an op's (or a module's) output, in any phase; backward ops output gradients
  parameter,  // a parameter's value; `op` is the parameter's full name
  gradient,   // a parameter's gradient after backward; `op` is the parameter's full name
  update,     // what the optimizer step changed (new value - old value); `op` the parameter
};
// "output", "parameter", "gradient", "update".
std::string_view role_name(Role role) noexcept;

// What the floating-point inputs of an op held, when the producer can tell: the counts of NaN and
// of +-Inf, and how many of them sat in inputs that came into the step from outside its ops (no
// autograd history and no parameter: the input batch, a buffer, a mask built before the step).
struct InputKinds {
  std::int64_t nan = 0;
  std::int64_t inf = 0;
  std::int64_t outside_nan = 0;
  std::int64_t outside_inf = 0;
  bool finite() const noexcept { return nan == 0 && inf == 0; }
};

// Answers, on demand, what the floating-point inputs of an observed op held. A producer that can
// tell only by scanning the inputs (the LibTorch adapter keeps references to them) hands one over
// instead of scanning every input of every op: a consumer asks only for an output it found
// non-finite. Valid only during the observe call.
class InputsCheck {
 public:
  // nullopt when the producer cannot tell (too many inputs, or none it could read).
  virtual std::optional<bool> inputs_finite() const = 0;
  // The counts, when the producer can give them. The default answers from inputs_finite(): a
  // non-finite answer then counts one NaN and one Inf of unknown origin.
  virtual std::optional<InputKinds> input_kinds() const {
    const std::optional<bool> finite = inputs_finite();
    if (!finite) return std::nullopt;
    return *finite ? InputKinds{} : InputKinds{1, 1, 0, 0};
  }
  // The inputs the producer kept, for a consumer that reads their dtypes and shapes (the shapes
  // export, tfdebug::ide::ShapeRecorder): the LibTorch adapter's are the op's floating-point
  // inputs. Views valid only during the observe call. The default: none known.
  virtual std::vector<TensorView> input_views() const { return {}; }
  // A backward op's autograd node, by its name ("SqrtBackward0": the derivative of a sqrt), when
  // the producer knows it; "" otherwise. The default: not known.
  virtual std::string autograd_node() const { return {}; }

 protected:
  ~InputsCheck() = default;
};

struct Observation {
  std::int64_t step = 0;
  Phase phase = Phase::forward;
  Role role = Role::output;
  std::string_view module;  // module path, e.g. "blocks.1.attn"; "" at the top level or unknown
  std::string_view op;      // "aten::log" for outputs; the parameter's name for the other roles
  TensorView value;         // valid only during the call
  // Outputs only: whether every floating-point input of the op was finite, when the producer
  // knows. Finite inputs and a non-finite output make this op the producer of a bad value;
  // non-finite inputs make it a propagator.
  std::optional<bool> inputs_finite;
  // Outputs only, when inputs_finite is empty: asks the producer (see InputsCheck).
  const InputsCheck* inputs = nullptr;
  // Outputs of activations whose rules need the pre-activation (GELU: its flat tail is only
  // visible in the input): the op's first floating-point input, when the producer has it.
  const TensorView* input = nullptr;
  // What the inputs held (set by a Session for the non-finite outputs it hands its rules, from
  // resolve_input_kinds; a producer may set it instead of inputs_finite).
  std::optional<InputKinds> input_kinds = std::nullopt;
  // Backward outputs only: the autograd node the op ran in ("SqrtBackward0"), when known (set by a
  // Session for the non-finite outputs it hands its rules, from InputsCheck::autograd_node; a
  // producer may set it instead). Valid only during the call.
  std::string_view node = {};
  // Outputs only: the op wrote values its caller chose rather than computed them from its inputs
  // (zeros, full, fill_, masked_fill, where, arange): such an output has no units, and the +-Inf
  // it holds were put there on purpose (attention masks fill padded keys with -inf).
  bool filled = false;
  // Outputs only: the dimension that holds the units (features, channels) of the output, for the
  // per-unit rules; -1: the last. Convolutions' outputs (N, C, ...) hold them in dimension 1.
  // kNoUnits: the values are no units' activations (the LibTorch adapter says so of every op but
  // an activation function: a reduction or a layer over dead ReLUs only echoes them).
  static constexpr std::int8_t kNoUnits = -2;
  std::int8_t unit_dim = -1;
  // Parameters only: whether the parameter takes gradients (LibTorch's requires_grad) and its
  // producer delivers them, when it knows (rule unused_parameters: one whose gradient never comes
  // is unused); false for a frozen parameter, and for one whose gradients it does not deliver (a
  // sparse gradient); nullopt: not said, not judged.
  std::optional<bool> trainable = std::nullopt;

  // inputs_finite when the producer set it, else the answer of `inputs`, else nullopt.
  std::optional<bool> resolve_inputs_finite() const {
    if (input_kinds) return input_kinds->finite();
    if (inputs_finite || inputs == nullptr) return inputs_finite;
    return inputs->inputs_finite();
  }
  // input_kinds when set, else from inputs_finite (non-finite: one NaN and one Inf of unknown
  // origin), else the answer of `inputs`, else nullopt.
  std::optional<InputKinds> resolve_input_kinds() const {
    if (input_kinds) return input_kinds;
    if (inputs_finite) return *inputs_finite ? InputKinds{} : InputKinds{1, 1, 0, 0};
    if (inputs == nullptr) return std::nullopt;
    return inputs->input_kinds();
  }
};

// How much a producer observes. A Session raises watch to diagnose for the following steps when
// a rule trips; producers read tier() at each begin_step.
enum class Tier : std::uint8_t {
  watch,     // module outputs, parameters, gradients and updates
  diagnose,  // also every op's output, forward and backward
};

// What a sink answers to an observation.
struct Verdict {
  // Whether every value of the observation was finite, when the sink read them all; nullopt
  // when it did not. A producer that sees the same memory again unchanged later in the step (the
  // input an in-place op is about to overwrite) can use the answer instead of reading the values
  // a second time.
  std::optional<bool> finite;
  // Stop here: the producer calls ObservationSink::pause at this point before it goes on.
  bool pause = false;

  Verdict() = default;
  Verdict(std::optional<bool> f) : finite(f) {}  // NOLINT: a plain answer reads as a Verdict
  Verdict(std::nullopt_t) {}                     // NOLINT
  Verdict(bool f) : finite(f) {}                 // NOLINT
};

// Where a producer stopped after Verdict::pause: the observation, the op's inputs and the
// tensors the producer can reach by name. Every view is valid only during the pause() call, and
// only on the paused thread's terms: read them, do not keep them.
class PausePoint {
 public:
  virtual const Observation& observation() const noexcept = 0;
  // The op's floating-point inputs as the producer kept them (empty when it kept none, or for
  // parameters, gradients and updates).
  virtual std::span<const TensorView> inputs() const noexcept = 0;
  // The names of the other tensors the producer can show while paused (the LibTorch adapter: every
  // parameter, "blocks.0.attn.q.weight", and its gradient, "blocks.0.attn.q.weight.grad").
  virtual std::vector<std::string> tensor_names() const { return {}; }
  // One of them; nullopt for another name (or a tensor that is not a dense CPU float tensor).
  virtual std::optional<TensorView> tensor(std::string_view name) const {
    (void)name;
    return std::nullopt;
  }

 protected:
  ~PausePoint() = default;
};

class ObservationSink {
 public:
  virtual ~ObservationSink() = default;
  virtual void begin_step(std::int64_t step) = 0;
  // The producer starts `step` again from its beginning, to observe it in more detail (the
  // LibTorch adapter replays a step in Tier::diagnose after watch saw a NaN or Inf in it): what
  // was observed of the step since begin_step is forgotten (per-step rule state, the flight
  // recorder's record of it); findings already raised stay. Observations of the step, and its
  // end_step, follow. The default does nothing.
  virtual void restart_step(std::int64_t step) { (void)step; }
  // Thread-safe. See Verdict.
  virtual Verdict observe(const Observation& observation) = 0;
  // Called by the producer after an observe() that answered pause, on the same thread, at a
  // point where the training thread can wait: blocks until the sink lets it go. The default
  // returns at once.
  virtual void pause(const PausePoint& point) { (void)point; }
  // `loss`: the step's loss, when the producer knows it.
  virtual void end_step(std::int64_t step, std::optional<double> loss) = 0;
  virtual Tier tier() const noexcept = 0;
  // True when the run was configured to stop at the first error and one was found: the
  // producer then throws tfdebug::Error from its next safe point (never otherwise).
  virtual bool should_stop() const noexcept = 0;
};

}  // namespace tfdebug
