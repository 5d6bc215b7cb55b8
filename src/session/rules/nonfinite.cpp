// Rule nonfinite (docs/rules.md): the op that produced the first NaN or Inf, told apart from the
// ops that passed it on.
//
// Note [Producer and propagator]: an output with NaN/Inf whose op's inputs were all finite was
// produced by that op; with non-finite inputs the op only passed the value on. A producer is
// reported at once (one error per producing op, deduplicated over steps); propagators, and
// parameters, gradients and updates holding non-finite values, only count as evidence. When a
// step holds non-finite values but no producer (the producer did not know its inputs, or the
// value came from a parameter), the first non-finite observation of the step is reported at
// end_step as the best localisation available, once per run. An update is an output too when
// its producer says whether the parameter and its gradient were finite: the optimizer's ops
// that made it were not observed one by one.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "rule_text.hpp"
#include "tfdebug/session/rule_registry.hpp"
#include "tfdebug/session/rules/nonfinite.hpp"

namespace tfdebug::detail {
namespace {

class Nonfinite final : public Rule {
 public:
  Nonfinite(const RunConfig& /*config*/, const NonfiniteRule& /*settings*/) {}

  Interest interest() const override { return Interest::all().only_nonfinite(); }
  Needs needs(const Observation& /*o*/) const override { return {Need::nonfinite}; }

  void observe(const RuleInput& in, RuleContext& out) override {
    const Observation& o = in.observation;
    const Stats& s = in.stats;
    if (s.nonfinite() == 0) return;
    const bool producer = (o.role == Role::output || o.role == Role::update) && o.inputs_finite == true;
    if (!producer) {
      ++step_propagators_;
      if (!step_first_nonfinite_)
        step_first_nonfinite_ =
            Candidate{std::string(o.module), std::string(o.op), o.phase, o.role, o.inputs_finite, s};
      return;
    }
    Finding f = make_finding("nonfinite", Severity::error, o.step, o.phase, o.module, o.op);
    std::string kinds;
    if (s.nan > 0) kinds += std::to_string(s.nan) + " NaN";
    if (s.pos_inf > 0) kinds += (kinds.empty() ? "" : ", ") + std::to_string(s.pos_inf) + " +Inf";
    if (s.neg_inf > 0) kinds += (kinds.empty() ? "" : ", ") + std::to_string(s.neg_inf) + " -Inf";
    if (o.role == Role::update) {
      f.message = "the optimizer's update of " + std::string(o.op) + " holds " + kinds + " of " +
                  std::to_string(s.count) + " values from a finite parameter and gradient" +
                  at_step(o.phase, o.step);
      f.suggestion =
          "the optimizer's own arithmetic made it: check its settings (an eps of 0 divides by a zero "
          "second moment, a learning rate or weight decay large enough to overflow) and its state";
    } else {
      f.message = where(o.module, o.op) + " produced " + kinds + " of " + std::to_string(s.count) +
                  " values from finite inputs" + at_step(o.phase, o.step);
      f.suggestion =
          "check this op's inputs for values outside its domain (log/sqrt of negatives, division by "
          "~0, exp overflow); clamp or add an epsilon, or lower the learning rate if they grew";
    }
    f.evidence = {{"producer", 1},    {"nan", s.nan},     {"pos_inf", s.pos_inf}, {"neg_inf", s.neg_inf},
                  {"count", s.count}, {"propagators", 0}, {"finite_min", s.min},  {"finite_max", s.max}};
    step_producers_.emplace_back(o.module, o.op);
    reported_ = true;
    out.emit(std::move(f));
  }

  void end_step(std::int64_t step, std::optional<double> /*loss*/, RuleContext& out) override {
    if (!step_producers_.empty()) {
      // Every propagator of the step is evidence for the step's first producer.
      const auto& [module, op] = step_producers_.front();
      out.add_evidence("nonfinite", module, op, "propagators", double(step_propagators_));
    } else if (step_first_nonfinite_ && !reported_) {
      const Candidate& c = *step_first_nonfinite_;
      Finding f = make_finding("nonfinite", Severity::error, step, c.phase, c.module, c.op);
      const std::string what = c.role != Role::output ? "the " + std::string(role_name(c.role)) + " " + c.op
                                                      : where(c.module, c.op);
      const std::string why = c.role != Role::output     ? " (no op was seen producing it)"
                              : c.inputs_finite == false ? " (its inputs were already non-finite)"
                                                         : " (the producer did not report whether "
                                                           "its inputs were finite)";
      f.message = "first non-finite value: " + what + " holds " + std::to_string(c.stats.nonfinite()) +
                  " NaN/Inf of " + std::to_string(c.stats.count) + why + at_step(c.phase, step);
      f.suggestion = c.role != Role::output
                         ? "the value was corrupted before this step's ops ran: look at the "
                           "previous step's update and gradients"
                         : "observe this op's inputs (Probe::observe with inputs, or "
                           "Tier::diagnose) to find the op that produced the value";
      f.evidence = {{"producer", 0},
                    {"nan", c.stats.nan},
                    {"pos_inf", c.stats.pos_inf},
                    {"neg_inf", c.stats.neg_inf},
                    {"count", c.stats.count},
                    {"propagators", step_propagators_ - 1}};
      reported_ = true;
      out.emit(std::move(f));
    }
    step_producers_.clear();
    step_first_nonfinite_.reset();
    step_propagators_ = 0;
  }

 private:
  struct Candidate {
    std::string module, op;
    Phase phase = Phase::forward;
    Role role = Role::output;
    std::optional<bool> inputs_finite;
    Stats stats;
  };
  std::optional<Candidate> step_first_nonfinite_;
  std::vector<std::pair<std::string, std::string>> step_producers_;  // (module, op) this step
  std::int64_t step_propagators_ = 0;
  bool reported_ = false;
};

}  // namespace

void register_rule_nonfinite(RuleRegistry& registry) {
  registry.add<NonfiniteRule, Nonfinite>();
}

}  // namespace tfdebug::detail
