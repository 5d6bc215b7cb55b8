// Rules init_scale and weight_drift (docs/rules.md): std * sqrt(fan_in) of each weight matrix
// when first seen, and how far it drifts from that.
#include <cmath>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>

#include "keyed_state.hpp"
#include "rule_text.hpp"
#include "tfdebug/session/rule_registry.hpp"
#include "tfdebug/session/rules/weight_scale.hpp"

namespace tfdebug::detail {
namespace {

class WeightScale final : public Rule {
 public:
  WeightScale(const RunConfig& config, const WeightScaleRule& settings)
      : rule_(settings), scales_(std::size_t(config.max_tracked)) {}

  Interest interest() const override { return Interest::role(Role::parameter); }
  Needs needs(const Observation& o) const override {
    if (o.value.rank() < 2) return {};
    return {due(o.step) ? Need::moments : Need::none};
  }

  void observe(const RuleInput& in, RuleContext& out) override {
    const Observation& o = in.observation;
    if (!first_step_) first_step_ = o.step;
    measured_step_ = o.step;
    const Stats& s = in.stats;
    const TensorView& v = o.value;
    if (s.nonfinite() > 0 || v.rank() < 2 || v.shape(0) == 0 || s.finite() < 2) return;
    const std::int64_t fan_in_elements = v.numel() / v.shape(0);  // exact: shape(0) divides numel
    const auto fan_in = static_cast<double>(fan_in_elements);
    const double scale = s.std * std::sqrt(fan_in);
    bool first = false;
    State* state = scales_.find_or_add(o.module, o.op, &first);
    if (state == nullptr) return;
    if (first) {
      state->first_scale = scale;
      state->first_step = o.step;
      if (scale >= rule_.min_init && scale <= rule_.max_init) return;
      // An embedding table's input is one-hot: its fan-in says nothing about its scale.
      const std::string_view name = o.op.empty() ? o.module : o.op;
      for (const std::string_view embedding : {"embed", "wte", "wpe", "tok", "pos"}) {
        if (name.find(embedding) != std::string_view::npos) return;
      }
      Finding f = make_finding("init_scale", Severity::warning, o.step, o.phase, o.module, o.op);
      f.message = "weight " + std::string(o.op) + " starts with std * sqrt(fan_in) = " + num(scale) +
                  " (std " + num(s.std) + ", fan_in " + num(fan_in) +
                  "); common initialisations give 0.5-1.5";
      f.suggestion = scale > rule_.max_init ? "initialise with std ~ 1/sqrt(fan_in) (LeCun/Kaiming) "
                                              "or the model's documented std"
                                            : "the weight is (nearly) constant or tiny: check its "
                                              "initialisation";
      f.evidence = {{"scale", scale}, {"std", s.std}, {"fan_in", fan_in}};
      out.emit(std::move(f));
      return;
    }
    if (state->first_scale <= 0) return;
    // Note [Drift is a rate]
    // Judged against its first scale for the whole run, a weight that BatchNorm makes
    // scale-invariant (it grows like the square root of the steps under Adam) or a head on
    // separable data (like the log) passes any fixed factor in time: a healthy 8,000-step run of
    // the zoo's CNN warned on fc at step 2,881 and on conv2 at 4,377 (10x), both still growing,
    // more and more slowly. So drift is a rate, as spectral growth is (Note [Spectral growth] in
    // spectral.cpp): a weight leaves its initialisation by several times in its first hundreds of
    // steps, so in the first 2 x drift_window steps it is judged against its first scale with
    // max_drift (10x); from then on against its scale at least drift_window (200) steps before,
    // once that is past the first drift_window steps, with max_drift_rate (3x; the zoo's healthy
    // 2,000-step runs: at most 2.1x, and 1.6x from step 600 on). A learning rate raised 30x at
    // step 900 passed it at the next measurement (the CNN's convolutions 4.7-5.2x at step 913,
    // the GRU's matrices 3.6-8.6x at step 902).
    const std::int64_t since_first = o.step - state->first_step;
    double reference = state->first_scale;
    std::int64_t reference_step = state->first_step;
    double limit = rule_.max_drift;
    // the scales kept: the newest at least drift_window steps old, and every later one
    auto& kept = state->kept;
    while (kept.size() >= 2 && o.step - kept[1].step >= rule_.drift_window) kept.pop_front();
    if (since_first >= 2 * rule_.drift_window && !kept.empty() &&
        o.step - kept.front().step >= rule_.drift_window) {
      reference = kept.front().scale;
      reference_step = kept.front().step;
      limit = rule_.max_drift_rate;
    }
    if (since_first >= rule_.drift_window) kept.push_back({o.step, scale});
    const double drift = reference > 0 ? scale / reference : 1.0;
    if (drift <= limit && drift >= 1.0 / limit) return;
    Finding f = make_finding("weight_drift", Severity::warning, o.step, o.phase, o.module, o.op);
    f.message = "weight " + std::string(o.op) + "'s std * sqrt(fan_in) is " + num(scale) + ", " + num(drift) +
                "x its value at step " + std::to_string(reference_step) + " (" + num(reference) + ")";
    f.suggestion = drift > 1 ? "weights grow: lower the learning rate or add weight decay"
                             : "weights shrink towards 0: weight decay may be too strong";
    f.evidence = {{"scale", scale},
                  {"reference_scale", reference},
                  {"reference_step", double(reference_step)},
                  {"drift", drift}};
    out.emit(std::move(f));
  }

  void summarize(RunSummary& summary) const override {
    summary.untracked_observations += scales_.untracked();
  }

 private:
  struct Scale {
    std::int64_t step = 0;
    double scale = 0;
  };
  struct State {
    double first_scale = 0;
    std::int64_t first_step = 0;
    std::deque<Scale> kept;  // Note [Drift is a rate]: from drift_window steps after the first
  };
  WeightScaleRule rule_;
  KeyedState<State> scales_;
  std::optional<std::int64_t> first_step_;  // the step of the first weight observed
  std::int64_t measured_step_ = 0;          // the last step whose weights were measured

  // The first step seen (every weight's first scale), then a step at least rule_.every steps
  // after the last one measured: the weights of one step come one after another, and the steps
  // that observe them are watch's samples (Note [Watch budget]), not every step.
  bool due(std::int64_t step) const {
    return !first_step_ || step == *first_step_ || step == measured_step_ ||
           step - measured_step_ >= rule_.every || step < measured_step_;
  }
};

}  // namespace

void register_rule_weight_scale(RuleRegistry& registry) {
  registry.add<WeightScaleRule, WeightScale>();
}

}  // namespace tfdebug::detail
