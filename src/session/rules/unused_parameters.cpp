// Rule unused_parameters (docs/rules.md): a parameter that takes gradients (its producer says it is
// trainable: LibTorch's requires_grad) whose gradient never came, over `window` steps that
// delivered other parameters' gradients. No loss depends on it: a layer built and never called, a
// branch never taken, an output that is detached or ignored. PyTorch's DistributedDataParallel
// stops on such a parameter (find_unused_parameters); a single process trains on without a word.
#include <cstdint>
#include <string>

#include "keyed_state.hpp"
#include "rule_text.hpp"
#include "tfdebug/session/rule_registry.hpp"
#include "tfdebug/session/rules/unused_parameters.hpp"

namespace tfdebug::detail {
namespace {

class UnusedParameters final : public Rule {
 public:
  UnusedParameters(const RunConfig& config, const UnusedParametersRule& settings)
      : rule_(settings), parameters_(std::size_t(config.max_tracked)) {}

  Interest interest() const override {
    return Interest::role(Role::parameter) | Interest::role(Role::gradient);
  }
  Needs needs(const Observation& o) const override {
    if (o.role == Role::parameter && !o.trainable) return {};  // a producer that does not say
    return {Need::range};
  }

  void observe(const RuleInput& in, RuleContext& /*out*/) override {
    const Observation& o = in.observation;
    State* state = parameters_.find_or_add(o.module, o.op);
    if (state == nullptr) return;
    if (o.role == Role::gradient) {
      step_has_gradients_ = true;
      if (!state->reached && state->pending) --pending_;
      state->reached = true;
      state->pending = false;
      return;
    }
    if (!*o.trainable) {  // frozen, or a gradient its producer does not deliver (a sparse one)
      if (state->pending) --pending_;
      state->pending = false;
      state->off = true;
      return;
    }
    if (state->reached || state->off || state->pending || state->reported) return;
    state->pending = true;
    state->since = gradient_steps_;
    state->since_step = o.step;
    ++pending_;
  }

  void end_step(std::int64_t step, std::optional<double> /*loss*/, RuleContext& out) override {
    if (!step_has_gradients_) return;  // no backward this step (an evaluation, a skipped batch)
    step_has_gradients_ = false;
    ++gradient_steps_;
    if (pending_ == 0) return;
    parameters_.for_each([&](std::string_view module, std::string_view op, State& state) {
      if (!state.pending || gradient_steps_ - state.since < rule_.window) return;
      state.pending = false;
      state.reported = true;
      --pending_;
      const std::int64_t steps = gradient_steps_ - state.since;
      Finding f = make_finding("unused_parameters", Severity::warning, step, Phase::backward, module, op);
      f.message = "parameter " + std::string(op) + " takes gradients but none came in " +
                  std::to_string(steps) + " steps with a backward (since step " +
                  std::to_string(state.since_step) + "): no loss depends on it";
      f.suggestion =
          "call its module in the forward (a layer built but never called, a branch never taken), "
          "or freeze it (requires_grad false): the optimizer keeps state for it and weight decay "
          "shrinks it for nothing";
      f.evidence = {{"steps", double(steps)}, {"since_step", double(state.since_step)}};
      out.emit(std::move(f));
    });
  }

  // The replayed step's first pass may have delivered gradients; the replay delivers them again.
  void restart_step(std::int64_t /*step*/) override { step_has_gradients_ = false; }

  void summarize(RunSummary& summary) const override {
    summary.untracked_observations += parameters_.untracked();
  }

 private:
  struct State {
    bool reached = false;  // a gradient came
    bool off = false;      // its producer said it does not take gradients
    bool pending = false;  // trainable, no gradient yet: counted in pending_
    bool reported = false;
    std::int64_t since = 0;       // gradient_steps_ when first seen trainable
    std::int64_t since_step = 0;  // the step it was first seen trainable
  };
  UnusedParametersRule rule_;
  KeyedState<State> parameters_;
  std::int64_t gradient_steps_ = 0;  // steps that delivered a gradient
  std::int64_t pending_ = 0;         // parameters trainable with no gradient yet
  bool step_has_gradients_ = false;
};

}  // namespace

void register_rule_unused_parameters(RuleRegistry& registry) {
  registry.add<UnusedParametersRule, UnusedParameters>();
}

}  // namespace tfdebug::detail
