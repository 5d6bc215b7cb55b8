// Rule update_ratio (docs/rules.md): ||update|| / ||weight|| of each weight matrix, per step.
// Weight matrices only: biases and norm scales start at 0 or 1, so their first updates are large
// relative to them by construction. Judged when it persists (UpdateRatioRule::persist steps in a
// row) after a warm-up (UpdateRatioRule::warmup: Adam's and RMSprop's first steps are large by
// construction), or at once on any step, warm-up included, above immediate_ratio (the first
// update observed: above first_update_factor times it).
//
// Note [A weight that learned]
// Below min_ratio is reported only for a weight whose updates never reached it: one that has
// not moved since it was first observed (a learning rate far too low, a parameter the optimizer
// does not hold). A weight that learned and whose updates then shrank had its learning rate
// decayed (a cosine schedule ends at 0: a causal decoder under AdamW fell below 1e-5 in its last
// 10-30 of 300 steps, five warnings a run) or its gradient vanish, which vanishing_gradients
// reports from the gradient itself.
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "keyed_state.hpp"
#include "rule_text.hpp"
#include "tfdebug/session/rule_registry.hpp"
#include "tfdebug/session/rules/update_ratio.hpp"

namespace tfdebug::detail {
namespace {

class UpdateRatio final : public Rule {
 public:
  UpdateRatio(const RunConfig& config, const UpdateRatioRule& settings)
      : rule_(settings), pairs_(std::size_t(config.max_tracked)) {}

  Interest interest() const override {
    return Interest::role(Role::parameter) | Interest::role(Role::update);
  }
  Needs needs(const Observation& o) const override { return {o.value.rank() >= 2 ? Need::norm : Need::none}; }

  void observe(const RuleInput& in, RuleContext& /*out*/) override {
    if (in.stats.nonfinite() > 0) return;
    const Observation& o = in.observation;
    if (Pair* pair = pairs_.find_or_add(o.module, o.op)) {
      if (pair->op.empty()) {
        pair->module = o.module;
        pair->op = o.op;
      }
      (o.role == Role::parameter ? pair->weight : pair->update) = in.stats.l2;
    }
  }

  void end_step(std::int64_t step, std::optional<double> /*loss*/, RuleContext& out) override {
    std::vector<Pair*> pairs;
    pairs_.for_each([&](std::string_view, std::string_view, Pair& p) {
      if (p.weight && p.update && *p.weight > 0) pairs.push_back(&p);
    });
    std::sort(pairs.begin(), pairs.end(), [](const Pair* a, const Pair* b) { return a->op < b->op; });
    for (Pair* pair : pairs) {
      const double ratio = *pair->update / *pair->weight;
      ++pair->steps;
      // Note [A weight that learned]: too small only while it never moved more.
      if (ratio >= rule_.min_ratio) pair->learned = true;
      const bool outside = (ratio < rule_.min_ratio && !pair->learned) || ratio > rule_.max_ratio;
      const bool warming_up = pair->steps <= rule_.warmup;
      // RMSprop's first update moves every entry by 1/sqrt(1 - alpha) = 10 learning rates
      // (its second moment holds 1% of one squared gradient), the next ones by 7, 5.8, ...
      const double immediate =
          rule_.immediate_ratio * (warming_up && pair->steps == 1 ? rule_.first_update_factor : 1.0);
      if (!outside || (warming_up && ratio <= immediate)) {
        pair->outside = 0;
        continue;
      }
      if (pair->outside++ == 0) pair->outside_since = step;
      if (pair->outside < rule_.persist && ratio <= immediate) continue;
      const bool high = ratio > rule_.max_ratio;
      Finding f =
          make_finding("update_ratio", Severity::warning, step, Phase::optimizer, pair->module, pair->op);
      const std::string since = pair->outside > 1
                                    ? ", for " + std::to_string(pair->outside) + " steps since step " +
                                          std::to_string(pair->outside_since)
                                    : "";
      f.message = "update of " + pair->op + " is " + num(ratio) + " of the weight's norm (" +
                  (high ? "above " + num(rule_.max_ratio) : "below " + num(rule_.min_ratio)) +
                  "; ~1e-3 is typical" + since + ")" + at_step(Phase::optimizer, step);
      f.suggestion = high ? "the learning rate is likely too high for this parameter"
                          : "the parameter barely moves: the learning rate may be too low or its "
                            "gradient vanishes";
      f.evidence = {{"ratio", ratio},
                    {"update_norm", *pair->update},
                    {"weight_norm", *pair->weight},
                    {"steps_outside", pair->outside},
                    {"since_step", pair->outside_since}};
      f.magnitude = std::log10(high ? ratio / rule_.max_ratio : rule_.min_ratio / std::max(ratio, 1e-300));
      out.emit(std::move(f));
    }
    reset_step();
  }

  void restart_step(std::int64_t /*step*/) override { reset_step(); }

  void summarize(RunSummary& summary) const override { summary.untracked_observations += pairs_.untracked(); }

 private:
  // The next step starts empty; the entries stay, so that it allocates nothing.
  void reset_step() {
    pairs_.for_each([](std::string_view, std::string_view, Pair& p) {
      p.weight.reset();
      p.update.reset();
    });
  }

  struct Pair {
    std::string module, op;
    std::optional<double> weight, update;  // this step's L2 norms
    std::int64_t steps = 0;                // steps with both, so far (UpdateRatioRule::warmup)
    std::int64_t outside = 0;              // steps in a row outside the band
    std::int64_t outside_since = 0;        // the first of them
    bool learned = false;                  // a ratio of min_ratio or more was seen
  };
  UpdateRatioRule rule_;
  KeyedState<Pair> pairs_;
};

}  // namespace

void register_rule_update_ratio(RuleRegistry& registry) {
  registry.add<UpdateRatioRule, UpdateRatio>();
}

}  // namespace tfdebug::detail
