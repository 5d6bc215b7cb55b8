// Rules loss_spike and divergence (docs/rules.md): the step's loss against the largest so far and
// a robust z-score over a window; a non-finite loss; a median of recent losses far above the
// lowest the loss settled at.
//
// Note [A loss below 0]
// A Gaussian negative log-likelihood, an ELBO, a policy-gradient objective go below 0 as they
// learn (a heteroscedastic regression: 2.1 to -2.2 in 400 steps). "1.5x the median" means nothing
// for a median of -1.7 (a batch at -0.83 read as "0.48x the median"), so for a median at or below
// 0 the z-scored jump must be (min_spike_ratio - 1) times the median's size, and the share of the
// largest loss becomes a share of the run's range (the largest loss less the lowest, when that
// went below 0); the message says how far above the median the loss went.
//
// Note [The window's own noise]
// A z-score over the median absolute deviation assumes batch losses spread evenly about their
// median. A classifier near its fit does not: most batches are almost 0 and a batch holding one
// confidently wrong example costs that example's loss over the batch size, so its losses are
// skewed, with a long upper tail. A breast-cancer MLP (Adam, batches of 32, median 0.03) had
// batches at 0.15-0.27 every 10-40 steps, each z 6-13 and 5-8x the median: seven warnings in one
// healthy 300-step run, two of two runs; the digits MLP one at 0.38, 2.3x a median of 0.17. Such a
// loss is at a level the window's own batches reached. So a z-scored spike must also jump at least
// `min_spike_over_window` (2) times as far above the median as the highest loss of the window
// did; a batch far beyond anything in the window is still one (a digits CNN at a median of 0.006
// with one batch at 0.18, 3.6 times the window's highest jump: a digit it gets confidently wrong).
//
// Note [The run's own noise]
// The window's highest loss is fifty batches' worth of the task's noise; a run of thousands of
// steps draws batches further out in the same tail. 2,000-step healthy runs of the zoo's models
// (5 models, seeds 1-6) raised loss_spike four times, each passing every test above: a batch at
// 2.1-3.9x its median (z 6.1-7.3, 2.2-3.2 times the window's highest jump). Each was at most
// 1.8 times as far above its median, relative to the median, as an earlier batch of the same run
// had gone (MLP seed 4 at step 1,176: 1.11 against 0.97 before it; GRU seed 1: 2.94 against 2.53;
// CNN seed 3: 1.35 against 1.22; GRU seed 3 at step 217: 2.68 against 1.50). So a spike of a loss
// above 0 must also jump, relative to its median, `min_spike_over_history` (2) times as far as
// any earlier step of the run that was not itself a spike: relative, because a loss that falls
// spreads less in absolute terms and more relative to its level as it converges, and a record
// of absolute jumps would be set by the first steps. A loss at or below 0 has no scale to be
// relative to (Note [A loss below 0]) and is judged without it. What this gives up: a run whose
// batches went 2.5x their median once needs a later batch at 4x to be called a spike (the zoo's
// noisiest, the encoder, had batches at 5.6x: 10x there); a loss above 10x the largest so far is
// one regardless.
//
// Note [A converged loss does not diverge]
// "3x the lowest median" reads a classifier near its fit as diverging: its loss is a few
// thousandths, and a few hard batches in a row lift the median of 10 three times over. MLPs on the
// breast-cancer and digits sets (tests/torch/real_data_test.cpp) trained 3,000 steps warned so in
// 6 of 8 runs, at steps 265-920: best medians of 0.003-0.024 against recent ones of 0.008-0.08,
// having given back 0.8-8.6% of the 0.6-2.3 their losses fell. So for a loss above 0 the recent
// median must also have given back `divergence_min_share` (10%) of the fall. What this gives up:
// a loss that climbs from its best slowly is reported later, once it has given back a tenth of
// what training won; one that settles again below that share is not reported at all.
//
// Note [A loss that climbs back]
// "3x the lowest median" is divergence for a loss whose 0 is a perfect fit; a loss that goes below
// 0 has no such 0 (a Gaussian NLL moves by log(sigma) with the units of its target), so the only
// scale is the run's own: the loss diverges when its recent median has given back
// `divergence_give_back` of what it fell (the highest median of `window` losses less the lowest)
// and rose more than twice its batches' standard deviation around the lowest (a loss that barely
// fell is not judged on its noise). A regression whose targets' noise grew 3% a step from step 250
// climbed from a best median of -1.56 back to +1.56 and was never reported by the ratio.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "history.hpp"
#include "rule_text.hpp"
#include "tfdebug/session/rule_registry.hpp"
#include "tfdebug/session/rules/loss.hpp"

namespace tfdebug::detail {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// 1.4826 * MAD estimates the standard deviation of normally distributed values.
constexpr double kMadToSigma = 1.4826;
// A loss at or below 0 diverges only by more than this many standard deviations of its batches:
// the median of 10 normal values varies by about 0.4 sigma, so 2 sigma is 5 times that.
constexpr double kNoiseSigmas = 2.0;

class Loss final : public Rule {
 public:
  Loss(const RunConfig& /*config*/, const LossRule& settings)
      : rule_(settings),
        window_(std::size_t(settings.window)),
        recent_(std::size_t(settings.divergence_window)) {}

  Interest interest() const override { return {}; }  // the loss comes with end_step
  Needs needs(const Observation& /*o*/) const override { return {}; }

  void end_step(std::int64_t step, std::optional<double> loss, RuleContext& out) override {
    if (!loss) return;
    const double value = *loss;
    if (!std::isfinite(value)) {
      Finding f = make_finding("divergence", Severity::error, step, Phase::forward, "", "loss");
      f.message = "the loss is " + num(value) + at_step(Phase::forward, step);
      f.suggestion =
          "see the nonfinite finding for the op that produced it; lower the learning rate "
          "or clip gradients";
      f.evidence = {{"loss", value}};
      out.emit(std::move(f));
      return;
    }
    const double spike_vs_max = max_loss_ && *max_loss_ > 0 ? value / *max_loss_ : kNaN;
    double z = kNaN;
    double median = kNaN;
    double window_max = kNaN;
    if (window_.size() >= std::size_t(std::min(rule_.min_window, rule_.window))) {
      median = window_.median();
      window_max = window_.max();
      const double mad = window_.median_absolute_deviation(median);
      if (mad > 0) z = (value - median) / (kMadToSigma * mad);
    }
    // Note [A loss below 0]: the ratios hold for a positive median; below, the same jump in
    // units of the median's size, and the share of the run's range.
    const double jump = value - median;
    const bool positive = median > 0;
    const bool far_enough = positive ? value > rule_.min_spike_ratio * median
                                     : jump > (rule_.min_spike_ratio - 1) * std::abs(median);
    const double range = max_loss_ ? *max_loss_ - std::min(0.0, *min_loss_) : 0.0;
    // Note [The window's own noise]
    const bool beyond_window = jump >= rule_.min_spike_over_window * (window_max - median);
    // Note [The run's own noise]
    const double relative_jump = positive ? jump / median : kNaN;
    const bool beyond_history =
        !positive || relative_jump >= rule_.min_spike_over_history * largest_relative_jump_;
    const bool z_spike = z > rule_.max_z && far_enough && jump >= rule_.min_spike_share * range &&
                         beyond_window && beyond_history;
    const bool spike = spike_vs_max > rule_.spike_factor || z_spike;
    if (!spike && relative_jump > largest_relative_jump_) largest_relative_jump_ = relative_jump;
    if (spike) {
      Finding f = make_finding("loss_spike", Severity::warning, step, Phase::forward, "", "loss");
      const std::string against =
          positive ? num(value / median) + "x the median" : num(jump) + " above the median, " + num(median);
      f.message =
          "loss " + num(value) + " jumped: " +
          (spike_vs_max > rule_.spike_factor ? num(spike_vs_max) + "x the largest loss so far"
                                             : against + ", robust z-score " + num(z) + " over the last " +
                                                   std::to_string(window_.size()) + " steps") +
          at_step(Phase::forward, step);
      f.suggestion =
          "look at this step's batch and the gradient findings; clip gradients or lower "
          "the learning rate";
      f.evidence = {{"loss", value},
                    {"max_loss", max_loss_.value_or(kNaN)},
                    {"ratio_to_max", spike_vs_max},
                    {"median", median},
                    {"window_max", window_max},
                    {"largest_relative_jump", largest_relative_jump_},
                    {"z", z}};
      f.magnitude = positive ? value / median : std::isnan(spike_vs_max) ? z : spike_vs_max;
      out.emit(std::move(f));
    }
    window_.push(value);
    recent_.push(value);
    max_loss_ = std::max(max_loss_.value_or(value), value);
    min_loss_ = std::min(min_loss_.value_or(value), value);
    if (!recent_.full()) return;
    // The recent median against the lowest the loss has settled at: the median of up to `window`
    // steps, not of `divergence_window`, whose lowest is a run of lucky batches on a noisy task.
    const double recent = recent_.median();
    const double settled = window_.median();
    if (!best_settled_ || settled < *best_settled_) {
      best_settled_ = settled;
      best_sigma_ = kMadToSigma * window_.median_absolute_deviation(settled);
    }
    highest_settled_ = std::max(highest_settled_.value_or(settled), settled);
    const double best = *best_settled_;
    const double rise = recent - best;
    // Note [A loss that climbs back]: above 0, factor x the best; at or below 0, a share of what
    // the loss fell, and more than the batches' noise around the best.
    const double fell = *highest_settled_ - best;
    // Note [A converged loss does not diverge]
    const bool diverging =
        best > 0 ? recent > rule_.divergence_factor * best && rise >= rule_.divergence_min_share * fell
                 : rise > rule_.divergence_give_back * fell && rise > kNoiseSigmas * best_sigma_;
    if (diverging) {
      Finding f = make_finding("divergence", Severity::warning, step, Phase::forward, "", "loss");
      const std::string against =
          best > 0 ? num(recent / best) + "x the lowest median of " + std::to_string(rule_.window) +
                         " steps (" + num(best) + ")"
                   : num(rise) + " above the lowest median of " + std::to_string(rule_.window) + " steps (" +
                         num(best) + "), " + num(rise / fell) + " of its fall from " + num(*highest_settled_);
      f.message = "the loss is diverging: the median of the last " + std::to_string(rule_.divergence_window) +
                  " losses is " + num(recent) + ", " + against + at_step(Phase::forward, step);
      f.suggestion = "lower the learning rate, add warmup, or clip gradients";
      f.evidence = {{"recent_median", recent},
                    {"best_median", best},
                    {"highest_median", *highest_settled_},
                    {"ratio", best > 0 ? recent / best : kNaN},
                    {"given_back", fell > 0 ? rise / fell : kNaN}};
      f.magnitude = best > 0 ? recent / best : rise / std::max(fell, best_sigma_);
      out.emit(std::move(f));
    }
  }

 private:
  LossRule rule_;
  Ring window_;
  Ring recent_;
  std::optional<double> max_loss_;
  std::optional<double> min_loss_;
  // The largest (loss - median) / median of the judged steps so far that were not spikes, for a
  // median above 0 (Note [The run's own noise]).
  double largest_relative_jump_ = 0;
  std::optional<double> best_settled_;     // the lowest median of window_ so far
  double best_sigma_ = 0;                  // 1.4826 MAD of window_ when its median was the lowest
  std::optional<double> highest_settled_;  // the highest median of window_ so far
};

}  // namespace

void register_rule_loss(RuleRegistry& registry) {
  registry.add<LossRule, Loss>();
}

}  // namespace tfdebug::detail
