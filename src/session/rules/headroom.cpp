// Rules headroom_overflow and headroom_underflow (docs/rules.md): values that a cast to
// RunConfig::target_dtype would overflow or flush to zero, measured by the stats kernel
// (StatsOptions::target).
#include <optional>
#include <string>

#include "keyed_state.hpp"
#include "rule_text.hpp"
#include "tfdebug/session/rule_registry.hpp"
#include "tfdebug/session/rules/headroom.hpp"

namespace tfdebug::detail {
namespace {

class Headroom final : public Rule {
 public:
  Headroom(const RunConfig& config, const HeadroomRule& settings)
      : rule_(settings), target_(config.target_dtype), underflows_(std::size_t(config.max_tracked)) {}

  // Outputs, parameters and gradients; updates are differences, not values the model holds.
  Interest interest() const override {
    if (!target_) return {};
    return Interest::role(Role::output) | Interest::role(Role::parameter) | Interest::role(Role::gradient);
  }
  Needs needs(const Observation& o) const override {
    return {is_floating(o.value.dtype()) ? Need::target : Need::none};
  }

  void observe(const RuleInput& in, RuleContext& out) override {
    const Observation& o = in.observation;
    const Stats& s = in.stats;
    if (!s.target || s.finite() == 0) return;
    const TargetFit& t = *s.target;
    const std::string target = std::string(dtype_name(t.dtype));
    if (t.range_used >= rule_.overflow_range_used) {
      Finding f = make_finding("headroom_overflow", Severity::warning, o.step, o.phase, o.module, o.op);
      f.message = where(o.module, o.op) + " " + std::string(role_name(o.role)) + " reaches " +
                  num(s.abs_max) + " = " + num(t.range_used) + " of " + target + "'s largest value" +
                  (t.overflow > 0 ? " (" + std::to_string(t.overflow) + " values overflow)" : "") +
                  at_step(o.phase, o.step);
      f.suggestion =
          "keep this op in f32 under autocast, rescale its input (normalise, smaller "
          "init), or use bf16's wider range";
      f.evidence = {{"abs_max", s.abs_max},
                    {"range_used", t.range_used},
                    {"overflow", t.overflow},
                    {"overflow_fraction", t.overflow_fraction}};
      f.magnitude = t.range_used;
      out.emit(std::move(f));
    }
    const bool underflows = t.underflow_fraction >= rule_.underflow_fraction && t.underflow > 0;
    std::int64_t streak = 0;
    if (o.step >= rule_.underflow_warmup) {
      if (Streak* entry = underflows_.find_or_add(o.module, o.op)) {
        // Observations in a row, once per step (a replayed step does not count twice).
        if (entry->step != o.step) {
          entry->count = underflows ? entry->count + 1 : 0;
          entry->step = o.step;
        }
        streak = entry->count;
      }
    }
    if (underflows && streak >= rule_.underflow_persist) {
      Finding f = make_finding("headroom_underflow", Severity::warning, o.step, o.phase, o.module, o.op);
      f.message = where(o.module, o.op) + " " + std::string(role_name(o.role)) + ": " +
                  num(100 * t.underflow_fraction) + "% of the values would flush to zero in " + target +
                  " (smallest non-zero |x| " + num(s.min_abs_nonzero) + ")" + at_step(o.phase, o.step);
      f.suggestion = o.role == Role::gradient || o.phase == Phase::backward
                         ? "scale the loss (dynamic loss scaling, e.g. GradScaler) before backward"
                         : "keep this op in f32 or rescale its values";
      f.evidence = {{"underflow", t.underflow},
                    {"underflow_fraction", t.underflow_fraction},
                    {"min_abs_nonzero", s.min_abs_nonzero},
                    {"observations_in_a_row", streak}};
      f.magnitude = t.underflow_fraction;
      out.emit(std::move(f));
    }
  }

  void summarize(RunSummary& summary) const override {
    summary.untracked_observations += underflows_.untracked();
  }

 private:
  struct Streak {
    std::int64_t step = -1;  // the last step counted
    std::int64_t count = 0;  // observations in a row that underflowed
  };
  HeadroomRule rule_;
  std::optional<DType> target_;
  KeyedState<Streak> underflows_;
};

}  // namespace

void register_rule_headroom(RuleRegistry& registry) {
  registry.add<HeadroomRule, Headroom>();
}

}  // namespace tfdebug::detail
