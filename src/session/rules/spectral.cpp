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
    double growth = 1.0;
    {
      const std::lock_guard lock(mutex_);
      State* state = states_.find_or_add(o.module, o.op);
      if (state == nullptr) return;
      state->vector = e->right_vector;
      if (state->first_norm == 0) state->first_norm = e->spectral_norm;
      state->latest = SpectralMeasurement{std::string(o.module), std::string(o.op), o.step,
                                          e->spectral_norm,      e->stable_rank,    e->iterations};
      growth = state->first_norm > 0 ? e->spectral_norm / state->first_norm : 1.0;
    }
    const TensorView& v = o.value;
    const std::int64_t rows = v.shape(0);
    const std::int64_t cols = v.numel() / rows;
    const bool collapsed = std::min(rows, cols) >= std::max<std::int64_t>(rule_.min_collapse_dim, 2) &&
                           e->spectral_norm > 0 && e->stable_rank < rule_.min_stable_rank;
    if (!collapsed && growth <= rule_.max_growth) return;
    Finding f = make_finding("spectral", Severity::warning, o.step, o.phase, o.module, o.op);
    f.message = "weight " + std::string(o.op) + ": spectral norm " + num(e->spectral_norm) +
                (growth > rule_.max_growth ? " (" + num(growth) + "x its first measurement)" : "") +
                ", stable rank " + num(e->stable_rank) + " of at most " +
                std::to_string(std::min(rows, cols)) + (collapsed ? ": one direction dominates" : "") +
                " (step " + std::to_string(o.step) + ")";
    f.suggestion = "lower the learning rate or add weight decay / spectral normalisation for this layer";
    f.evidence = {{"spectral_norm", e->spectral_norm},
                  {"stable_rank", e->stable_rank},
                  {"growth", growth},
                  {"iterations", e->iterations}};
    f.magnitude = std::max(growth, collapsed ? rule_.min_stable_rank / std::max(e->stable_rank, 1e-12) : 0.0);
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
    double first_norm = 0;
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
