// Rule nonfinite (docs/rules.md): the op that produced the first NaN or Inf, told apart from the
// ops that passed it on, from the data it came in with, and from the infinities a mask put there.
//
// Note [Producer and propagator]
// An op produced a bad value when its output holds a kind of non-finite value (NaN, or +-Inf)
// that none of its floating-point inputs held: finite inputs and a NaN output (log of a negative),
// or -Inf inputs and a NaN output (softmax over a row whose every key is masked: -inf - -inf).
// Otherwise it passed the value on (a propagator). A producer is reported at once, one error per
// producing op, deduplicated over steps; propagators count as its evidence.
//
// Note [Intended infinities]
// Masks put -inf where attention must not look (MultiheadAttention's masked_fill over padded
// keys, an additive causal mask built with full(-inf) and triu): those infinities are meant. So
// +-Inf without NaN is no fault when an op that writes caller-chosen values (Observation::filled:
// masked_fill, where, fill_, full) produced it, or when it came into the step from outside its
// ops (InputKinds::outside_inf: a mask made before the step) or from such an intended value:
// an op whose inputs held only infinities and whose output holds only infinities passes the mask
// on. What a mask can really break shows as a NaN (the fully masked softmax row), which is
// reported where it was produced. An Inf in the data itself is therefore reported only when it
// turns into a NaN, or when the step's loss is not finite: then the first Inf of the step is
// reported as the best localisation there is.
//
// Note [The data is the producer]
// A NaN that comes into an op in an input that no op of the step computed from a parameter (no
// autograd history, no parameter: the input batch, a buffer; InputKinds::outside_nan), before any
// other non-finite value of the step, was not made by the model: the op that read it is reported,
// saying that the data holds it.
//
// Note [A mask in the loss]
// A mask's -Inf that reaches a loss that is not finite was still written on purpose: the fault is
// the term that took it in. Masked logits (masked_fill with -inf outside each example's candidate
// classes) under cross_entropy with label_smoothing 0.1 give a loss of +Inf from the first step:
// label smoothing adds every class's log-probability, -Inf for the masked ones, while the
// gradients stay finite (softmax gives the masked classes 0). The step's first infinity, the
// masked_fill, is named as the mask it is, with the term to change, rather than as "not a
// mask's" with the advice to observe the ops that were observed already.
//
// When a step holds non-finite values but no producer (the producer did not know its inputs, or
// the value sat in a parameter when the step began), its first non-finite observation is reported
// at end_step as the best localisation available, once per run. An update is an output too when
// its producer says whether the parameter and its gradient were finite: the optimizer's ops that
// made it were not observed one by one.
#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "nonfinite_hints.hpp"
#include "rule_text.hpp"
#include "tfdebug/session/rule_registry.hpp"
#include "tfdebug/session/rules/nonfinite.hpp"

namespace tfdebug::detail {
namespace {

std::string kinds_text(const Stats& s) {
  std::string kinds;
  if (s.nan > 0) kinds += std::to_string(s.nan) + " NaN";
  if (s.pos_inf > 0) kinds += (kinds.empty() ? "" : ", ") + std::to_string(s.pos_inf) + " +Inf";
  if (s.neg_inf > 0) kinds += (kinds.empty() ? "" : ", ") + std::to_string(s.neg_inf) + " -Inf";
  return kinds;
}

class Nonfinite final : public Rule {
 public:
  Nonfinite(const RunConfig& /*config*/, const NonfiniteRule& settings) : rule_(settings) {}

  Interest interest() const override { return Interest::all().only_nonfinite(); }
  Needs needs(const Observation& /*o*/) const override { return {Need::nonfinite}; }

  void observe(const RuleInput& in, RuleContext& out) override {
    const Observation& o = in.observation;
    const Stats& s = in.stats;
    if (s.nonfinite() == 0) return;
    const bool nan = s.nan > 0;
    const bool computed = o.role == Role::output || o.role == Role::update;
    const std::optional<InputKinds> kinds = computed ? o.resolve_input_kinds() : std::nullopt;
    // Note [Producer and propagator]
    const bool new_nan = kinds && nan && kinds->nan == 0;
    const bool new_inf = kinds && s.pos_inf + s.neg_inf > 0 && kinds->inf == 0;
    // Note [Intended infinities]: a mask's -inf written (a filled op), or passed on
    const bool masking = rule_.intended_infinities && o.role == Role::output;
    if (masking && !nan && kinds && kinds->nan == 0 && (o.filled || !new_inf)) {
      if (!step_first_infinity_) step_first_infinity_ = candidate(o, s);
      return;
    }
    // A mask written over values that already held NaN passes the NaN on.
    const bool producer = new_nan || (new_inf && !(masking && o.filled));
    if (producer) {
      report_producer(o, s, out);
      return;
    }
    // Note [The data is the producer]
    if (nan && kinds && kinds->outside_nan > 0 && kinds->outside_nan == kinds->nan &&
        o.role == Role::output && !step_first_nonfinite_ && step_producers_.empty()) {
      report_data(o, s, *kinds, out);
      return;
    }
    ++step_propagators_;
    if (!step_first_nonfinite_) step_first_nonfinite_ = candidate(o, s);
  }

  void end_step(std::int64_t step, std::optional<double> loss, RuleContext& out) override {
    const bool loss_bad = loss && !std::isfinite(*loss);
    if (!step_producers_.empty()) {
      // Every propagator of the step is evidence for the step's first producer.
      const auto& [module, op] = step_producers_.front();
      out.add_evidence("nonfinite", module, op, "propagators", double(step_propagators_));
    } else if (!reported_ && step_first_nonfinite_) {
      report_first(step, *step_first_nonfinite_, step_propagators_ - 1, "", out);
    } else if (!reported_ && loss_bad && step_first_infinity_ && step_first_infinity_->filled) {
      report_mask_in_loss(step, *step_first_infinity_, out);  // Note [A mask in the loss]
    } else if (!reported_ && loss_bad && step_first_infinity_) {
      report_first(step, *step_first_infinity_, 0,
                   "; the loss is not finite, so the infinities were not a mask's", out);
    } else if (!reported_ && replayed_ && replayed_->step == step) {
      // Seen the first time through, not in the replay: the step is not reproducible.
      report_first(step, replayed_->first, 0,
                   "; a replay of the step in diagnose saw no NaN or Inf: it is not reproducible "
                   "(non-deterministic ops, or a batch that changed between the runs)",
                   out);
    }
    replayed_.reset();
    clear_step();
  }

  void restart_step(std::int64_t step) override {
    if (step_first_nonfinite_) replayed_ = Replayed{step, *step_first_nonfinite_};
    clear_step();
  }

 private:
  struct Candidate {
    std::string module, op;
    Phase phase = Phase::forward;
    Role role = Role::output;
    std::optional<InputKinds> kinds;
    Stats stats;
    bool filled = false;  // an op that writes caller-chosen values made it (Observation::filled)
  };
  struct Replayed {
    std::int64_t step = 0;
    Candidate first;
  };

  // "aten::div in c1", and a backward op's node when known: "aten::div (SqrtBackward0) in c1".
  static std::string producer_where(const Observation& o) {
    if (o.node.empty()) return where(o.module, o.op);
    std::string text = std::string(o.op) + " (" + std::string(o.node) + ")";
    if (!o.module.empty()) text += " in " + std::string(o.module);
    return text;
  }

  static Candidate candidate(const Observation& o, const Stats& s) {
    const bool computed = o.role == Role::output || o.role == Role::update;
    return Candidate{std::string(o.module),
                     std::string(o.op),
                     o.phase,
                     o.role,
                     computed ? o.resolve_input_kinds() : std::nullopt,
                     s,
                     o.filled};
  }

  void clear_step() {
    step_producers_.clear();
    step_first_nonfinite_.reset();
    step_first_infinity_.reset();
    step_propagators_ = 0;
  }

  void report_producer(const Observation& o, const Stats& s, RuleContext& out) {
    Finding f = make_finding("nonfinite", Severity::error, o.step, o.phase, o.module, o.op);
    const std::string kinds = kinds_text(s);
    if (o.role == Role::update) {
      f.message = "the optimizer's update of " + std::string(o.op) + " holds " + kinds + " of " +
                  std::to_string(s.count) + " values from a finite parameter and gradient" +
                  at_step(o.phase, o.step);
      f.suggestion =
          "the optimizer's own arithmetic made it: check its settings (an eps of 0 divides by a zero "
          "second moment, a learning rate or weight decay large enough to overflow) and its state";
    } else if (o.resolve_input_kinds()->finite() && o.filled) {
      // A NaN no tensor input held, written by an op that writes the values its caller gives it
      // (x[i] = NAN is aten::fill_ on a view): the value came from the caller.
      f.message = where(o.module, o.op) + " wrote " + kinds + " of " + std::to_string(s.count) +
                  " values: it writes the value its caller gives it, and its tensor inputs were finite, "
                  "so the caller passed NaN" +
                  at_step(o.phase, o.step);
      f.suggestion =
          "look at the code that calls it and where its value comes from (a statistic of nothing: "
          "0 / 0, the mean of an empty selection; a NaN used as a marker for missing data)";
    } else if (o.resolve_input_kinds()->finite()) {
      f.message = producer_where(o) + " produced " + kinds + " of " + std::to_string(s.count) +
                  " values from finite inputs" + at_step(o.phase, o.step);
      // Note [What the op says] (nonfinite_hints.cpp)
      f.suggestion =
          producer_hint(o.op, o.phase, {s.nan, s.pos_inf, s.neg_inf}, /*from_infinities=*/false, o.node);
      if (f.suggestion.empty())
        f.suggestion =
            "check this op's inputs for values outside its domain (log/sqrt of negatives, division by "
            "~0, exp overflow); clamp or add an epsilon, or lower the learning rate if they grew";
    } else {
      // NaN from infinities: inf - inf, 0 * inf, inf / inf; a softmax over a row of -inf only.
      f.message = producer_where(o) + " produced " + kinds + " of " + std::to_string(s.count) +
                  " values from inputs that held +-Inf but no NaN" + at_step(o.phase, o.step);
      f.suggestion =
          producer_hint(o.op, o.phase, {s.nan, s.pos_inf, s.neg_inf}, /*from_infinities=*/true, o.node);
      if (f.suggestion.empty())
        f.suggestion =
            "an infinity met another (inf - inf, 0 * inf, inf / inf): see the finding for the op that "
            "made the infinity, and keep it from being made (a softmax over a row whose every entry "
            "is masked to -inf gives NaN: keep one entry of every row unmasked)";
    }
    f.evidence = {{"producer", 1},    {"nan", s.nan},     {"pos_inf", s.pos_inf}, {"neg_inf", s.neg_inf},
                  {"count", s.count}, {"propagators", 0}, {"finite_min", s.min},  {"finite_max", s.max}};
    if (!o.node.empty()) f.evidence.push_back({"autograd_node", std::string(o.node)});
    f.magnitude = double(s.nonfinite());
    step_producers_.emplace_back(o.module, o.op);
    reported_ = true;
    out.emit(std::move(f));
  }

  void report_data(const Observation& o, const Stats& s, const InputKinds& kinds, RuleContext& out) {
    Finding f = make_finding("nonfinite", Severity::error, o.step, o.phase, o.module, o.op);
    f.message = "the data holds NaN: " + where(o.module, o.op) + " read " +
                std::to_string(kinds.outside_nan) +
                " NaN from an input that no op of the step computed from a parameter (the input "
                "batch, a buffer), and its output holds " +
                kinds_text(s) + " of " + std::to_string(s.count) + at_step(o.phase, o.step);
    f.suggestion =
        "nothing in the model made it: check the batch and the data pipeline (a corrupt sample, a "
        "division by a zero count in preprocessing); drop or repair the sample";
    f.evidence = {{"producer", 0},
                  {"data", 1},
                  {"input_nan", kinds.outside_nan},
                  {"nan", s.nan},
                  {"pos_inf", s.pos_inf},
                  {"neg_inf", s.neg_inf},
                  {"count", s.count},
                  {"propagators", 0}};
    f.magnitude = double(s.nonfinite());
    step_producers_.emplace_back(o.module, o.op);
    reported_ = true;
    out.emit(std::move(f));
  }

  void report_first(std::int64_t step, const Candidate& c, std::int64_t propagators, std::string_view note,
                    RuleContext& out) {
    Finding f = make_finding("nonfinite", Severity::error, step, c.phase, c.module, c.op);
    const std::string what =
        c.role != Role::output ? "the " + std::string(role_name(c.role)) + " " + c.op : where(c.module, c.op);
    std::string why;
    const bool moved = c.role == Role::parameter && c.phase == Phase::optimizer;
    if (moved) {  // Note [A step that moved its parameters] in src/torch/replay.cpp
      why = " (the optimizer wrote them inside the step, from values that were finite when it began)";
    } else if (c.role == Role::parameter) {
      why = " (it held them when the step began: no op of the step produced them)";
    } else if (c.role == Role::gradient) {
      why = " (the backward op that produced it was not observed)";
    } else if (c.role == Role::update) {
      why = " (its parameter or gradient was already non-finite)";
    } else if (c.kinds && !c.kinds->finite()) {
      why = " (its inputs were already non-finite)";
    } else {
      why = " (the producer did not report whether its inputs were finite)";
    }
    f.message = "first non-finite value: " + what + " holds " + std::to_string(c.stats.nonfinite()) +
                " NaN/Inf of " + std::to_string(c.stats.count) + why + std::string(note) +
                at_step(c.phase, step);
    if (moved) {
      f.suggestion =
          "an optimizer run inside the step made them non-finite: lower its learning rate or clip its "
          "gradients; for L-BFGS, use a line search (LBFGSOptions::line_search_fn(\"strong_wolfe\"))";
    } else if (c.role == Role::parameter) {
      f.suggestion =
          "the value was written outside the step's ops (between steps: a checkpoint load, a manual "
          "edit, another thread) or by the previous step's update: look at its update findings";
    } else if (c.role == Role::output && c.kinds && !c.kinds->finite()) {
      f.suggestion =
          "observe every op (Tier::diagnose; with LibTorch, Attachment::step replays the step there "
          "by itself) to find the op that produced the value";
    } else {
      f.suggestion =
          "observe this step's ops in Tier::diagnose (Session::diagnose_steps) to find the op that "
          "produced the value (with LibTorch, Attachment::step replays a bad step there by itself, "
          "unless an optimizer moved the parameters inside the step before its gradients went bad)";
    }
    f.evidence = {{"producer", 0},
                  {"nan", c.stats.nan},
                  {"pos_inf", c.stats.pos_inf},
                  {"neg_inf", c.stats.neg_inf},
                  {"count", c.stats.count},
                  {"propagators", std::max<std::int64_t>(propagators, 0)}};
    f.magnitude = double(c.stats.nonfinite());
    reported_ = true;
    out.emit(std::move(f));
  }

  // Note [A mask in the loss]
  void report_mask_in_loss(std::int64_t step, const Candidate& c, RuleContext& out) {
    Finding f = make_finding("nonfinite", Severity::error, step, c.phase, c.module, c.op);
    f.message = "the loss is not finite, and the step's only non-finite values were a mask's: " +
                where(c.module, c.op) + " wrote " + std::to_string(c.stats.nonfinite()) + " +-Inf of " +
                std::to_string(c.stats.count) + ", and they reached the loss" + at_step(c.phase, step);
    f.suggestion =
        "a mask's -Inf is harmless only through softmax, log_softmax or max; a loss term that sums or "
        "averages every class (cross-entropy's label_smoothing, an entropy or KL over all classes) or "
        "multiplies the masked entries by 0 makes Inf or NaN of them: mask with a large finite value "
        "(-1e9, or the dtype's lowest) or leave the masked entries out of that term";
    f.evidence = {{"producer", 0},
                  {"mask", 1},
                  {"pos_inf", c.stats.pos_inf},
                  {"neg_inf", c.stats.neg_inf},
                  {"count", c.stats.count}};
    f.magnitude = double(c.stats.nonfinite());
    reported_ = true;
    out.emit(std::move(f));
  }

  NonfiniteRule rule_;
  std::optional<Candidate> step_first_nonfinite_;
  std::optional<Candidate> step_first_infinity_;  // Note [Intended infinities]: the step's first
  std::optional<Replayed> replayed_;              // the first run's candidate of a replayed step
  std::vector<std::pair<std::string, std::string>> step_producers_;  // (module, op) this step
  std::int64_t step_propagators_ = 0;
  bool reported_ = false;
};

}  // namespace

void register_rule_nonfinite(RuleRegistry& registry) {
  registry.add<NonfiniteRule, Nonfinite>();
}

}  // namespace tfdebug::detail
