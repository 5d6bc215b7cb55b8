// Rule update_ratio (docs/rules.md): ||update|| / ||weight|| of each weight matrix, per step.
// Weight matrices only: biases and norm scales start at 0 or 1, so their first updates are large
// relative to them by construction.
#include <algorithm>
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
    for (const Pair* pair : pairs) {
      const double ratio = *pair->update / *pair->weight;
      if (ratio >= rule_.min_ratio && ratio <= rule_.max_ratio) continue;
      const bool high = ratio > rule_.max_ratio;
      Finding f =
          make_finding("update_ratio", Severity::warning, step, Phase::optimizer, pair->module, pair->op);
      f.message = "update of " + pair->op + " is " + num(ratio) + " of the weight's norm (" +
                  (high ? "above " + num(rule_.max_ratio) : "below " + num(rule_.min_ratio)) +
                  "; ~1e-3 is typical)" + at_step(Phase::optimizer, step);
      f.suggestion = high ? "the learning rate is likely too high for this parameter"
                          : "the parameter barely moves: the learning rate may be too low or its "
                            "gradient vanishes";
      f.evidence = {{"ratio", ratio}, {"update_norm", *pair->update}, {"weight_norm", *pair->weight}};
      out.emit(std::move(f));
    }
    // The next step starts empty; the entries stay, so that it allocates nothing.
    pairs_.for_each([](std::string_view, std::string_view, Pair& p) {
      p.weight.reset();
      p.update.reset();
    });
  }

  void summarize(RunSummary& summary) const override { summary.untracked_observations += pairs_.untracked(); }

 private:
  struct Pair {
    std::string module, op;
    std::optional<double> weight, update;  // this step's L2 norms
  };
  UpdateRatioRule rule_;
  KeyedState<Pair> pairs_;
};

}  // namespace

void register_rule_update_ratio(RuleRegistry& registry) {
  registry.add<UpdateRatioRule, UpdateRatio>();
}

}  // namespace tfdebug::detail
