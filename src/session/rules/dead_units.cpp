// Rule dead_units (docs/rules.md): units of a computed forward output (its features, the last
// dimension, or a convolution's channels, dimension 1: Observation::unit_dim) that were exactly 0
// for every input over a window of steps, from column_nonzero's (or row_summaries') per-unit
// activity. Outputs an op filled with chosen values (zeros, fill_, full: Observation::filled) have
// no units: zero_grad's fill_ and an RNN's zero initial state are not dead layers; nor do outputs
// whose producer says so (Observation::kNoUnits). The calls of one op in one module (two ReLUs in
// a forward) are told apart by their order in the step: each has its own units.
//
// Note [What the window saw]
// "Exactly 0 for every input over the last 100 steps" is what diagnose sees, every batch of the
// window. Watch sees the batches of the steps it samples (Note [Watch budget]): 2 to 10 in 100
// steps, and a unit that fires on one input in a few hundred reads as dead there (a focal-loss
// MLP on the digits: 28 of 128 units from 2 sampled batches, 13 from every batch in diagnose). So
// a window whose steps were not all observed must hold `min_values` (1,000) values per unit at
// least (inputs, or positions of a sequence or an image): it reaches back past its steps, to the
// samples that hold them, when its own hold fewer. A unit that fires on one input in 200 looks
// dead in 1,000 with probability 0.7%, in 128 with 53%. A window whose every step was observed
// (diagnose) is judged as configured. The finding says what it saw: the steps, the values each
// unit had, the batches they came in (evidence steps_seen, values_seen, batches_seen).
#include <algorithm>
#include <any>
#include <deque>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "../unit_activity.hpp"
#include "keyed_state.hpp"
#include "rule_text.hpp"
#include "tfdebug/session/rule_registry.hpp"
#include "tfdebug/session/rules/dead_units.hpp"

namespace tfdebug::detail {
namespace {

constexpr std::size_t kListed = 16;  // dead units named in the evidence

class DeadUnits final : public Rule {
 public:
  DeadUnits(const RunConfig& config, const DeadUnitsRule& settings)
      : rule_(settings), units_(std::size_t(config.max_tracked)) {}

  Interest interest() const override { return Interest::of(Role::output, Phase::forward); }
  Needs needs(const Observation& o) const override {
    const TensorView& v = o.value;
    if (o.filled || o.unit_dim == Observation::kNoUnits || v.rank() < 2 || !is_floating(v.dtype()) ||
        v.numel() == 0)
      return {};
    const std::int64_t units = v.shape(unit_dimension(v, o.unit_dim));
    if (units < 2 || units > rule_.max_units) return {};
    return {Need::zeros, /*measure=*/true};
  }
  std::any measure(const Observation& o, const Stats& stats, bool has_zero) override {
    return unit_activity(o.value, unit_dimension(o.value, o.unit_dim), has_zero, stats.nonfinite() == 0);
  }

  void observe(const RuleInput& in, RuleContext& out) override {
    const auto* activity = std::any_cast<UnitActivity>(&in.measured);
    if (activity == nullptr || activity->units() == 0) return;
    const Observation& o = in.observation;
    // The call's order among the step's calls of this op in this module
    key_.assign(o.module).push_back('\0');
    key_.append(o.op);
    const int call = calls_[key_]++;
    if (call > 0) key_.assign(o.op).append("#").append(std::to_string(call + 1));
    UnitState* state = units_.find_or_add(o.module, call > 0 ? std::string_view(key_) : o.op);
    if (state == nullptr) return;
    const bool all_active = activity->active.empty();
    const auto units = std::size_t(activity->units());
    if (state->last_active.size() != units) {  // first sight (or the layer changed width)
      state->last_active.assign(units, -1);
      state->all_active = -1;
      state->first_step = o.step;
      state->last_evaluated = -1;
      state->seen.clear();
      state->seen_values = 0;
    }
    // Note [What the window saw]
    const std::int64_t values = o.value.numel() / std::int64_t(units);
    if (!state->seen.empty() && state->seen.back().first == o.step) {
      state->seen_values += values - state->seen.back().second;  // a replayed step observes it again
      state->seen.back().second = values;
    } else {
      state->seen.emplace_back(o.step, values);
      state->seen_values += values;
    }
    while (state->seen.front().first <= o.step - rule_.window &&
           state->seen_values - state->seen.front().second >= rule_.min_values) {
      state->seen_values -= state->seen.front().second;
      state->seen.pop_front();
    }
    if (all_active) {
      state->all_active = o.step;
    } else {
      for (std::size_t u = 0; u < units; ++u) {
        if (activity->active[u] != 0) state->last_active[u] = o.step;
      }
    }
    if (o.step - state->first_step + 1 < rule_.window || state->last_evaluated == o.step) return;
    // Note [What the window saw]: every step of the window, or as far back as the last
    // min_values values per unit reach
    std::int64_t cutoff = o.step - rule_.window + 1;
    std::int64_t batches = 0;
    std::int64_t seen_values = 0;
    for (auto it = state->seen.rbegin(); it != state->seen.rend() && it->first >= cutoff; ++it) {
      ++batches;
      seen_values += it->second;
    }
    if (batches < rule_.window) {
      if (state->seen_values < rule_.min_values) return;
      cutoff = std::min(cutoff, state->seen.front().first);
      batches = std::int64_t(state->seen.size());
      seen_values = state->seen_values;
    }
    state->last_evaluated = o.step;
    if (state->all_active >= cutoff) return;  // every unit was active within the window
    std::int64_t dead = 0;
    std::int64_t first_dead = -1;
    std::vector<std::int64_t> which;  // the first kListed dead units
    for (std::size_t u = 0; u < units; ++u) {
      if (std::max(state->last_active[u], state->all_active) < cutoff) {
        if (dead == 0) first_dead = std::int64_t(u);
        if (which.size() < kListed) which.push_back(std::int64_t(u));
        ++dead;
      }
    }
    const double fraction = double(dead) / double(units);
    if (dead == 0 || fraction < rule_.min_fraction) return;
    Finding f = make_finding("dead_units", Severity::warning, o.step, o.phase, o.module, o.op);
    const bool channels = unit_dimension(o.value, o.unit_dim) != int(o.value.rank()) - 1;
    f.message = std::to_string(dead) + " of " + std::to_string(units) +
                (channels ? " channels (" : " units (") + num(100 * fraction) + "%) of " +
                (call > 0 ? "call " + std::to_string(call + 1) + " of " : "") + where(o.module, o.op) +
                " were exactly 0 for every input seen over the last " + std::to_string(o.step - cutoff + 1) +
                " steps (" + std::to_string(seen_values) + " values each, in " + std::to_string(batches) +
                (batches == 1 ? " batch)" : " batches)") + at_step(o.phase, o.step);
    f.suggestion =
        "dead ReLUs: lower the learning rate, check the bias and weight initialisation of the layer "
        "before, or use LeakyReLU/GELU";
    f.evidence = {{"dead", dead},
                  {"units", units},
                  {"fraction", fraction},
                  {"window", rule_.window},
                  {"first_dead_unit", first_dead},
                  {"call", call + 1},
                  {"steps_seen", o.step - cutoff + 1},
                  {"values_seen", seen_values},
                  {"batches_seen", batches},
                  {"dead_units", std::move(which)}};
    f.magnitude = fraction;
    out.emit(std::move(f));
  }

  void end_step(std::int64_t /*step*/, std::optional<double> /*loss*/, RuleContext& /*out*/) override {
    calls_.clear();
  }
  void restart_step(std::int64_t /*step*/) override { calls_.clear(); }

  void summarize(RunSummary& summary) const override { summary.untracked_observations += units_.untracked(); }

 private:
  struct UnitState {
    std::int64_t first_step = 0;
    std::int64_t last_evaluated = -1;
    std::vector<std::int64_t> last_active;  // per unit, -1: never (see all_active)
    // The last step at which every unit was active (most outputs, most steps: no +-0 at all),
    // kept instead of writing it into every unit: a unit's last active step is the later of the
    // two.
    std::int64_t all_active = -1;
    // Note [What the window saw]: (step, values per unit) of each observation in the window
    std::deque<std::pair<std::int64_t, std::int64_t>> seen;
    std::int64_t seen_values = 0;  // their sum
  };
  DeadUnitsRule rule_;
  KeyedState<UnitState> units_;
  std::unordered_map<std::string, int> calls_;  // module '\0' op -> its calls so far this step
  std::string key_;
};

}  // namespace

void register_rule_dead_units(RuleRegistry& registry) {
  registry.add<DeadUnitsRule, DeadUnits>();
}

}  // namespace tfdebug::detail
