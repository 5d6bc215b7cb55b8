// Rule spectral (docs/rules.md): the spectral norm and stable rank of each weight matrix, by
// power iteration warm-started from the last measurement (Note [Power iteration] in
// src/session/spectral.cpp), every `every` steps.
#include <algorithm>
#include <any>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "keyed_state.hpp"
#include "rule_text.hpp"
#include "tfdebug/session/rule_registry.hpp"
#include "tfdebug/session/rules/spectral.hpp"
#include "tfdebug/session/spectral.hpp"

// Note [A rank that training chose]
// A weight whose stable rank is below min_stable_rank has one direction that dominates. At its
// first measurement (initialisation, or the checkpoint a run resumed from) that is a fault: the
// layer's rows are near copies of one another (a row broadcast over the matrix, a constant fill),
// and its units learn alike. Reached in training, it is what training chose: the breast-cancer
// MLP of tests/torch/real_data_test.cpp (30-32-2, Adam), healthy, brings its 32x32 hidden layer
// from a stable rank of ~8 to 1.48-1.49 by steps 2,080-2,313 in 3 of 4 runs of 3,000 steps (a
// two-class task needs about one direction there), and gradient descent drifts to low-rank
// weights on many tasks. So a collapse in training is said as info, and a warning when it comes
// with a growth too fast (a learning rate too high drives one direction) or has held since the
// first measurement.
namespace tfdebug::detail {
namespace {

class Spectral final : public Rule {
 public:
  Spectral(const RunConfig& config, const SpectralRule& settings)
      : rule_(settings), states_(std::size_t(config.max_tracked)) {}

  Interest interest() const override { return Interest::role(Role::parameter); }
  Needs needs(const Observation& o) const override {
    const TensorView& v = o.value;
    if (v.rank() < 2 || !is_floating(v.dtype()) || v.numel() > rule_.max_elements || v.shape(0) < 2 ||
        v.numel() / std::max<std::int64_t>(v.shape(0), 1) < 2)
      return {};
    return {Need::range, /*measure=*/true};
  }

  // A SpectralEstimate when the matrix is due a measurement (and finite); nothing otherwise.
  std::any measure(const Observation& o, const Stats& stats, bool /*has_zero*/) override {
    if (stats.nonfinite() > 0) return {};
    SpectralOptions options;
    options.max_iterations = rule_.max_iterations;
    options.tolerance = rule_.tolerance;
    {
      // Marked measured at this step before measuring, so that another thread does not measure it too.
      const std::lock_guard lock(mutex_);
      bool created = false;
      State* state = states_.find_or_add(o.module, o.op, &created);
      if (state == nullptr) return {};
      if (!created && o.step - state->last_step < rule_.every) return {};
      state->last_step = o.step;
      options.start = state->vector;
    }
    return estimate_spectral_norm(o.value, options);
  }

  void observe(const RuleInput& in, RuleContext& out) override {
    const auto* e = std::any_cast<SpectralEstimate>(&in.measured);
    if (e == nullptr) return;
    const Observation& o = in.observation;
    // Note [Spectral growth]
    // The first rule judged sigma_max against its first measurement, which is taken at
    // initialisation: every healthy 2,000-step run of the zoo's CNN warned (its BatchNorm'd conv2
    // 10.3x by step 1,000, its head 10x by step 1,800) and the GRU's recurrent matrix was at 7.7x
    // and climbing. Training leaves its initialisation by several times in the first hundreds of
    // steps (conv2 5.2x in 200, the sigmoid stack's head 5.9x), and then grows more and more
    // slowly (a weight that BatchNorm makes scale-invariant grows like the square root of the
    // steps under Adam; a head on separable data, like the log): conv2's next eight intervals of
    // 200 steps grew 1.22, 1.33, 1.12, 1.09, 1.07, 1.03, 1.05, 1.01x, and no later interval of
    // any zoo model's healthy runs (seeds 1-6) grew more than 1.9x. A weight that blows up grows
    // by a factor an interval that does not fall. So growth is a rate, judged between consecutive
    // measurements: above `max_growth` (3x), or `max_growth_from_init` (10x) for the interval that
    // leaves the initialisation. What this misses is steady growth slower than 3x an interval;
    // the loss and update rules see a run that it harms.
    double growth = 1.0;
    double previous_norm = 0;
    std::int64_t previous_step = o.step;
    const TensorView& v = o.value;
    const std::int64_t rows = v.shape(0);
    const std::int64_t cols = v.numel() / rows;
    const bool collapsed = std::min(rows, cols) >= std::max<std::int64_t>(rule_.min_collapse_dim, 2) &&
                           e->spectral_norm > 0 && e->stable_rank < rule_.min_stable_rank;
    bool from_init = false;
    bool first = false;
    bool born_collapsed = false;  // Note [A rank that training chose]
    {
      const std::lock_guard lock(mutex_);
      State* state = states_.find_or_add(o.module, o.op);
      if (state == nullptr) return;
      state->vector = e->right_vector;
      if (state->latest) {
        previous_norm = state->latest->spectral_norm;
        previous_step = state->latest->step;
      }
      ++state->measurements;
      first = state->measurements == 1;
      from_init = state->measurements == 2;
      // Collapsed since the first measurement, without a measurement in between that was not.
      state->born_collapsed = collapsed && (first || state->born_collapsed);
      born_collapsed = state->born_collapsed;
      state->latest = SpectralMeasurement{std::string(o.module), std::string(o.op), o.step,
                                          e->spectral_norm,      e->stable_rank,    e->iterations};
      growth = previous_norm > 0 ? e->spectral_norm / previous_norm : 1.0;
    }
    const double max_growth = from_init ? rule_.max_growth_from_init : rule_.max_growth;
    const bool grew = growth > max_growth;
    if (!collapsed && !grew) return;
    // Note [A rank that training chose]
    const bool learned = collapsed && !grew && !born_collapsed;
    Finding f = make_finding("spectral", learned ? Severity::info : Severity::warning, o.step, o.phase,
                             o.module, o.op);
    f.message =
        "weight " + std::string(o.op) + ": spectral norm " + num(e->spectral_norm) +
        (grew ? " (" + num(growth) + "x in " + std::to_string(o.step - previous_step) + " steps, from " +
                    num(previous_norm) + " at step " + std::to_string(previous_step) + ")"
              : "") +
        ", stable rank " + num(e->stable_rank) + " of at most " + std::to_string(std::min(rows, cols)) +
        (collapsed ? ": one direction dominates" : "") +
        (learned          ? ", as training made it"
         : born_collapsed ? (first ? " at its first measurement" : " since its first measurement")
                          : "") +
        " (step " + std::to_string(o.step) + ")";
    f.suggestion =
        learned ? "a task with few classes needs few directions here; if it has many, look for dead units "
                  "upstream or a learning rate too high"
        : born_collapsed
            ? "the layer's rows are near copies of one another: check its initialisation (a row broadcast "
              "over the matrix, a constant fill) or the checkpoint it was loaded from"
            : "lower the learning rate or add weight decay / spectral normalisation for this layer";
    f.evidence = {{"spectral_norm", e->spectral_norm},
                  {"stable_rank", e->stable_rank},
                  {"growth", growth},
                  {"steps", double(o.step - previous_step)},
                  {"iterations", e->iterations}};
    f.magnitude = std::max(grew ? growth / max_growth : 0.0,
                           collapsed ? rule_.min_stable_rank / std::max(e->stable_rank, 1e-12) : 0.0);
    out.emit(std::move(f));
  }

  void summarize(RunSummary& summary) const override {
    const std::lock_guard lock(mutex_);
    std::vector<SpectralMeasurement> latest;
    states_.for_each([&](std::string_view, std::string_view, const State& s) {
      if (s.latest) latest.push_back(*s.latest);
    });
    std::sort(latest.begin(), latest.end(), [](const SpectralMeasurement& a, const SpectralMeasurement& b) {
      return a.parameter < b.parameter;
    });
    summary.spectral.insert(summary.spectral.end(), latest.begin(), latest.end());
    summary.untracked_observations += states_.untracked();
  }

 private:
  struct State {
    std::int64_t last_step = 0;
    int measurements = 0;
    bool born_collapsed = false;  // collapsed at every measurement so far
    std::vector<double> vector;
    std::optional<SpectralMeasurement> latest;
  };
  SpectralRule rule_;
  mutable std::mutex mutex_;  // measure() runs on the observing threads
  KeyedState<State> states_;
};

}  // namespace

void register_rule_spectral(RuleRegistry& registry) {
  registry.add<SpectralRule, Spectral>();
}

}  // namespace tfdebug::detail
