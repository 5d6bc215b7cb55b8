// Rule: one diagnosis of a Session (docs/rules.md), as a plug-in. A rule says which observations
// it reads and what it needs measured about each; the Session measures once for all rules (the
// stats kernel, outside its lock), lets a rule read the tensor for more when it asks (measure),
// then hands it the observation and the measurements under its lock (observe), and calls it at
// the end of every step (end_step). A rule keeps its own state and emits Findings.
//
//   class LargeActivations : public tfdebug::Rule {
//    public:
//     tfdebug::Interest interest() const override {
//       return tfdebug::Interest::of(tfdebug::Role::output, tfdebug::Phase::forward);
//     }
//     tfdebug::Needs needs(const tfdebug::Observation&) const override { return {tfdebug::Need::range}; }
//     void observe(const tfdebug::RuleInput& in, tfdebug::RuleContext& out) override {
//       if (in.stats.abs_max < 1e4) return;
//       tfdebug::Finding f;
//       f.rule = "large_activations";  ...
//       out.emit(std::move(f));
//     }
//   };
//   session.add_rule(std::make_unique<LargeActivations>());
//
// A rule with configuration keys registers itself instead (rule_registry.hpp), so that run
// configuration files can set its keys and every Session runs it. The built-in rules live one per
// file in src/session/rules/ and register the same way.
#pragma once

#include <any>
#include <cstdint>
#include <optional>
#include <string_view>

#include "tfdebug/core/stats.hpp"
#include "tfdebug/session/finding.hpp"
#include "tfdebug/session/observation.hpp"
#include "tfdebug/session/run_summary.hpp"

namespace tfdebug {

// What a rule needs to know about an observation's values, cheapest first. The Session runs the
// cheapest kernel that gives what every rule reading the observation needs (Note [Light outputs]
// in src/session/session.cpp); NaN and Inf are always counted.
enum class Need : std::uint8_t {
  none,       // the rule does not read this observation
  nonfinite,  // only when some value is NaN or Inf (then with the full statistics)
  range,      // count, min, max and abs-max of the finite values
  zeros,      // ... and whether any value is +-0 (Stats::zero is then 1 or more)
  norm,       // ... and the L2 norm
  moments,    // the full statistics (mean, std, every count)
  target,     // the full statistics and the fit to RunConfig::target_dtype (Stats::target)
};

struct Needs {
  Need stats = Need::none;
  // Call Rule::measure for this observation (outside the lock, after the statistics).
  bool measure = false;
};

// The roles and phases whose observations a rule reads: the Session asks needs() only of the
// rules that read an observation's role and phase, so a rule costs nothing on the others.
class Interest {
 public:
  constexpr Interest() = default;
  static constexpr Interest of(Role role, Phase phase) { return Interest(bit(role, phase)); }
  static constexpr Interest all() { return Interest(0xFFF); }
  // Every phase of `role`.
  static constexpr Interest role(Role r) {
    return of(r, Phase::forward) | of(r, Phase::backward) | of(r, Phase::optimizer);
  }
  constexpr Interest operator|(Interest other) const { return Interest(bits_ | other.bits_); }
  constexpr bool reads(Role role, Phase phase) const { return (bits_ & bit(role, phase)) != 0; }
  // The rule reads these observations only when some value is NaN or Inf (needs() would always
  // say Need::nonfinite): the Session then asks nothing of it for finite ones.
  constexpr Interest only_nonfinite() const {
    Interest i(bits_);
    i.only_nonfinite_ = true;
    return i;
  }
  constexpr bool is_only_nonfinite() const { return only_nonfinite_; }
  constexpr bool empty() const { return bits_ == 0; }

 private:
  constexpr explicit Interest(std::uint16_t bits) : bits_(bits) {}
  static constexpr std::uint16_t bit(Role role, Phase phase) {
    return std::uint16_t(1U << (unsigned(role) * 3 + unsigned(phase)));
  }
  std::uint16_t bits_ = 0;
  bool only_nonfinite_ = false;
};

// What observe() gets: the observation (inputs_finite resolved for non-finite outputs), the
// statistics measured for it, and what measure() returned.
struct RuleInput {
  const Observation& observation;
  // From the kernel every reading rule's Need called for: fields beyond a Need are NaN (moments)
  // or 0 (counts) when the Session measured less, except after a NaN/Inf, when they are all set.
  const Stats& stats;
  bool has_zero = false;  // some value is +-0 (measured for Need::zeros and above)
  std::any& measured;     // what this rule's measure() returned for the observation; empty otherwise
};

// What a rule talks to: the Session, called with its lock held.
class RuleContext {
 public:
  // A finding: deduplicated by rule + severity + module + op, sent to the sinks when new.
  virtual void emit(Finding finding) = 0;
  // Adds `delta` to the number `key` of the kept error finding of this rule, module and op.
  virtual void add_evidence(std::string_view rule, std::string_view module, std::string_view op,
                            std::string_view key, double delta) = 0;

 protected:
  ~RuleContext() = default;
};

class Rule {
 public:
  virtual ~Rule() = default;
  // Which observations this rule reads (fixed for the rule's life).
  virtual Interest interest() const = 0;
  // What the rule needs measured about `observation` (of a role and phase it reads). Called on the
  // observing thread without the Session's lock, for every such observation: cheap, no state.
  virtual Needs needs(const Observation& observation) const = 0;
  // Reads the tensor for what the statistics do not say (per-unit activity, tails, power
  // iteration), when needs() asked for it. Called without the Session's lock, from any observing
  // thread, concurrently: a rule that reads its own state here guards it itself.
  virtual std::any measure(const Observation& observation, const Stats& stats, bool has_zero) {
    (void)observation;
    (void)stats;
    (void)has_zero;
    return {};
  }
  // An observation whose Need was met (a Need::nonfinite rule: only when some value is NaN/Inf).
  // Called with the Session's lock held.
  virtual void observe(const RuleInput& input, RuleContext& out) {
    (void)input;
    (void)out;
  }
  // The end of a step, with its loss when the producer knew it. Called with the lock held, in
  // registration order (docs/rules.md's table order for the built-in rules).
  virtual void end_step(std::int64_t step, std::optional<double> loss, RuleContext& out) {
    (void)step;
    (void)loss;
    (void)out;
  }
  // The producer replays `step` from its beginning (ObservationSink::restart_step): forget what
  // this step's observations added to the rule's per-step state. Called with the lock held.
  virtual void restart_step(std::int64_t step) { (void)step; }
  // Adds what the rule keeps to the run's summary (spectral measurements; state it could not keep:
  // RunSummary::untracked_observations). Called with the lock held.
  virtual void summarize(RunSummary& summary) const { (void)summary; }
};

}  // namespace tfdebug
