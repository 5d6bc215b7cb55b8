// Rules exploding_gradients and vanishing_gradients (docs/rules.md): each layer's gradient norm
// (the root of the sum of its parameters' squared gradient norms) against its own history and
// against the other layers of the step.
//
// Note [A spike or an explosion]
// Once a model has learned most of its data, a layer's gradient norm is heavy-tailed: the median
// of its last 50 steps falls tenfold from the first steps' and a hard mini-batch lifts one step
// 10-20x above it (the zoo's TransformerEncoderLayer, seed 1: 0.33 against a median of 0.019 at
// step 239, 0.26 at the next and 0.03 after, while its first steps carried 0.1-0.75). That is noise,
// not an explosion. A norm above explode_ratio x its history's median is an explosion when it
// also exceeds the largest norm the layer had in the run before it (an explosion goes where the
// layer has never been), or when it stays above for explode_sustain steps running (a divergence
// that has not yet passed the first steps' peak). What this gives up: one step below the run's
// peak, however far above the recent median, is not reported (the loss_spike rule reads the loss
// of that step; a NaN or Inf is nonfinite's). The peak counts once the layer has peak_after (50)
// norms behind it: before, it is the record of a few steps, and a step of stationary noise beats
// the n before it with chance 1/(n + 1). A GRU under RMSprop at PyTorch's default learning rate
// (RMSprop has no bias correction: its steps are 3x the learning rate at step 10, 2x at step 25)
// sends a hard batch's gradient 10-12x above the median of its first 20-25 steps and just past
// their largest (1.06-1.3x) in 3 of 16 healthy runs; from a 20-step record that was reported.
//
// Note [Catching up]
// Some layers start with almost no gradient: attention's query and key projections, while the
// attention is still uniform (the demo's, seed 2: 0.008, growing to 0.1 around step 50 as it
// learns the copy task, in line with the other layers, while the loss falls from 2.5 to 0.6 and
// every layer's gradient grows, the median layer's 3.2x). Such a layer rises 10x above its own
// history and above its own peak, and it is learning, not exploding. So a layer whose norm stays
// within in_line_ratio x the step's median layer, in a step whose median layer has not itself
// risen explode_ratio x above the history of the median layer, is not reported: an explosion of
// the whole network lifts the median layer as far, one of a single layer takes it out of line.
// When the step's loss is the lowest of the run, the model is learning, and a layer up to
// explode_ratio x the median layer is catching up too: `tfdebug demo --fault sqrt` (seed 1)
// learns its copy task at steps 55-70 (the loss falls from 2.2 to 1.1, a new lowest every step),
// and its first block's query and key gradients rise 11-13x above their history to 3-3.9x the
// median layer. A hard batch, which is what lifts a converged layer's gradient, has a high loss,
// and an explosion raises the loss with it.
//
// Note [A loss still falling]
// A model learning fast has a new lowest loss on many steps, one learning slowly on few: an LSTM
// reading the 8x8 digits row by row (8 -> 32, a Linear head, Adam at 3e-3) has its gradient rise
// from ~0.1 to 1.5-3.5 over steps 40-60 while its loss falls from 2.2 to 1.8 (seeds 3 and 4: 12x
// the median of its history and past its largest at steps 52 and 50), and neither step's loss
// was the run's lowest (1.99 after 1.93); the median of its last 10 losses, 2.06, was below
// every median of 10 before it. So a step is also one of a model learning when the median of
// its last 10 losses is the lowest of the run: noise on a plateau rarely sets such a record, and
// an explosion raises the loss, so the median stops falling within a few steps and the rise held
// for explode_sustain steps is reported. Such a model has two layers (an LSTM and its head), fewer
// than min_layers, and no median layer to be in line with: its layers are then judged by the loss
// alone.
//
// Note [A loss with nothing left to learn]
// A gradient is the loss's: near a loss of 0, cross-entropy's gradient is about the loss itself.
// A step whose loss fell 300x below its recent median (a learning rate 40x too high made an MLP
// with tanh overconfident on its batch: loss 1.5e-5 against 0.005) has every layer's gradient
// 500-1000x below its history, and nothing vanished: there was nothing left to learn. So a layer
// is measured against its history scaled by the step's fall in loss (loss / the median of the
// last history_length losses, at most 1): it vanished when its norm fell further than the loss.
// A layer that vanishes while the loss stays (saturated or dead units upstream) is judged as
// before; a loss of exactly 0 leaves no gradient to judge.
//
// Note [A gradient that follows its loss]
// The same holds upward: a hard batch lifts the loss, and the gradient with it. The breast-cancer
// MLP (30-32-2, Adam, batches of 32) trained 3,000 steps, seeds 1-4, has classified its training
// set for hundreds of steps when one batch lifts its first layer's gradient 13-18x its median and
// 1.1-1.9x past its largest before (steps 696-923): that batch's loss was 3.2-20x its median (the
// gradient of seed 2's step 697, 16x, rose with a loss 3.2x its own). That is the batch, not an
// explosion (the loss_spike rule judges the loss). So a single step beyond the layer's peak is
// judged against explode_ratio x the loss's rise (loss / the median of the last history_length
// losses, at least 1): it exploded when its gradient rose further than its loss. The zoo encoder's
// gradient spikes that are reported rose far beyond their loss (seed 8, step 234: 38-75x with a
// loss 1.9x its median; seed 15, step 145: 27x with 0.9x; seed 4, steps 975-978: 184-408x with
// 0.8-1.1x). Two kinds stay reported whatever the loss did: a step explode_ratio x past the
// layer's largest before (a batch whose loss is 1e4x its median, a corrupted one, takes an update
// far larger than any the run has survived: that is what clipping is for), and a norm that stays
// above explode_ratio x its history for explode_sustain steps (a divergence lifts both, and does
// not stop).
//
// Note [A loss that is not a number]
// A step whose loss is NaN or Inf is reported as that (divergence, and nonfinite names its op);
// its gradients are those of the broken loss, not the layers' health. A cross-entropy over a
// batch whose targets were all ignore_index is 0 / 0: NaN, with every gradient exactly 0, which
// read as "vanishing" on every layer. Such a step's norms are neither judged nor kept in the
// history.
//
// Note [A layer with a NaN gradient]
// A gradient that holds NaN or Inf has no norm (nonfinite reports it), and neither has its layer
// that step: judged by its other parameters alone, a WGAN-GP critic's last layer, whose weight
// took the NaN of a gradient penalty's sqrt at 0 and whose bias's gradient is exactly 0 in every
// step (the critic's two means cancel it), read as "gradient norm of c2 is 0" (vanishing). Such a
// layer is left out of the step: not judged, not in the median layer, not kept in its history.
//
// Note [A step without a gradient]
// A step whose loss is exactly 0 and whose every gradient is exactly 0 is the loss's, not a
// layer's: the loss was flat on that batch. REINFORCE with normalised advantages on the digits (a
// reward of 1 for the right digit, batches of 32) draws a batch whose 32 rewards are all 0 about
// once in 30 steps early on: every advantage is 0, so are the loss and every gradient, which read
// as "gradient norm of a is 0 (0x the median of its last 26 steps)" on all three layers (the
// loss's fall, Note [A loss with nothing left to learn], excuses nothing where the median loss is
// at or below 0). A triplet batch whose every triplet meets the margin, a hinge loss at 0 do the
// same. Such a step is neither judged nor kept in any history. A loss that stays flat is a fault
// (a reward never earned, an output multiplied by 0 before the loss), so history_length such steps
// running are reported once, for the model as a whole. Every gradient at 0 under a loss that is
// not 0 (every unit dead before the output) is judged as before: every layer vanished.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "history.hpp"
#include "keyed_state.hpp"
#include "rule_text.hpp"
#include "tfdebug/session/rule_registry.hpp"
#include "tfdebug/session/rules/gradients.hpp"

namespace tfdebug::detail {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

class Gradients final : public Rule {
 public:
  Gradients(const RunConfig& config, const GradientRule& settings)
      : rule_(settings),
        history_length_(std::size_t(config.history_length)),
        layers_(std::size_t(config.max_tracked)) {}

  Interest interest() const override { return Interest::role(Role::gradient); }
  Needs needs(const Observation& /*o*/) const override { return {Need::norm}; }

  void observe(const RuleInput& in, RuleContext& /*out*/) override {
    const Observation& o = in.observation;
    // The layer: its module, or its name up to the last '.'.
    const std::size_t dot = o.op.rfind('.');
    const std::string_view layer = !o.module.empty()               ? o.module
                                   : dot == std::string_view::npos ? o.op
                                                                   : o.op.substr(0, dot);
    if (Layer* entry = layers_.find_or_add(layer, "")) {
      // Note [A layer with a NaN gradient]
      if (in.stats.nonfinite() > 0) {
        entry->nonfinite = true;
        return;
      }
      entry->sq = (entry->seen ? entry->sq : 0.0) + in.stats.l2 * in.stats.l2;
      entry->seen = true;
    }
  }

  void end_step(std::int64_t step, std::optional<double> loss, RuleContext& out) override {
    // This step's layers, by name: findings of one step come out in a stable order. The vectors
    // are the rule's own, kept from step to step (end_step runs under the Session's lock).
    auto& layers = step_layers_;
    auto& norms = step_norms_;
    layers.clear();
    norms.clear();
    layers_.for_each([&](std::string_view name, std::string_view, Layer& entry) {
      if (entry.nonfinite) entry.seen = entry.nonfinite = false;  // Note [A layer with a NaN gradient]
      if (!entry.seen) return;
      layers.emplace_back(name, &entry);
      norms.push_back(std::sqrt(entry.sq));
    });
    const double layers_median = norms.size() >= std::size_t(rule_.min_layers) ? median_of(norms) : kNaN;
    // How far the step's median layer rose above its own history (Note [Catching up]).
    const double median_rise = layers_median > 0 && medians_.size() >= std::size_t(rule_.min_history)
                                   ? layers_median / medians_.median()
                                   : kNaN;
    // Note [A loss that is not a number]; Note [A step without a gradient]
    const bool flat = loss && *loss == 0 && !norms.empty() &&
                      std::all_of(norms.begin(), norms.end(), [](double norm) { return norm == 0; });
    flat_steps_ = flat ? flat_steps_ + 1 : 0;
    if (flat_steps_ == std::int64_t(history_length_)) emit_flat(step, out);
    const bool judged = (!loss || std::isfinite(*loss)) && !flat;
    if (judged && layers_median > 0 && std::isfinite(layers_median)) medians_.push(layers_median);
    // Note [Catching up]: a step whose loss is the lowest of the run is one of a model learning,
    // and so is one whose last kRecentSteps losses have the lowest median of the run (Note [A
    // loss still falling]).
    bool learning = loss && lowest_loss_ && *loss < *lowest_loss_;
    if (loss && std::isfinite(*loss)) {
      recent_losses_.push(*loss);
      if (recent_losses_.full()) {
        const double recent = recent_losses_.median();
        learning = learning || (lowest_recent_median_ && recent < *lowest_recent_median_);
        lowest_recent_median_ = std::min(lowest_recent_median_.value_or(recent), recent);
      }
    }
    // Note [A loss with nothing left to learn]: how far the loss fell below its recent median.
    const double loss_fall = loss && std::isfinite(*loss) &&
                                     losses_.size() >= std::size_t(rule_.min_history) && losses_.median() > 0
                                 ? std::min(1.0, *loss / losses_.median())
                                 : 1.0;
    // Note [A gradient that follows its loss]: how far the loss rose above its recent median.
    const double loss_rise = loss && std::isfinite(*loss) &&
                                     losses_.size() >= std::size_t(rule_.min_history) && losses_.median() > 0
                                 ? std::max(1.0, *loss / losses_.median())
                                 : 1.0;
    if (loss && std::isfinite(*loss)) {
      lowest_loss_ = std::min(lowest_loss_.value_or(*loss), *loss);
      losses_.push(*loss);
    }
    std::sort(layers.begin(), layers.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    exploded_.clear();
    for (const auto& [layer, entry] : layers) {
      const double norm = std::sqrt(entry->sq);
      entry->seen = false;  // the next step starts empty; the entries stay, so it allocates nothing
      if (!entry->history) entry->history.emplace(history_length_);
      Ring& history = *entry->history;
      const double history_median =
          history.size() >= std::size_t(rule_.min_history) ? history.median() : kNaN;
      const double to_history = history_median > 0 ? norm / history_median : kNaN;
      const double to_layers = layers_median > 0 ? norm / layers_median : kNaN;
      // Note [A spike or an explosion]
      const double peak = entry->peak;
      if (judged) entry->above = to_history > rule_.explode_ratio ? entry->above + 1 : 0;
      // Note [Catching up]
      // (A step of fewer than min_layers layers has no median layer: a learning model's layers
      // are then judged by the loss alone.)
      const bool catching_up =
          (to_layers <= rule_.in_line_ratio || (learning && !(to_layers > rule_.explode_ratio))) &&
          !(median_rise > rule_.explode_ratio);
      // Note [A gradient that follows its loss]: a single step beyond the peak must also have
      // risen further than its loss did, or gone explode_ratio x past the peak.
      const bool beyond_peak =
          norm > peak && entry->kept >= rule_.peak_after &&
          (to_history > rule_.explode_ratio * loss_rise || norm > rule_.explode_ratio * peak);
      const bool explode =
          judged &&
          ((entry->above > 0 && (beyond_peak || entry->above >= rule_.explode_sustain) && !catching_up) ||
           (rule_.explode_vs_layers > 0 && to_layers > rule_.explode_vs_layers));
      const bool vanish = judged && loss_fall > 0 &&
                          ((norm == 0 && (history_median > 0 || layers_median > 0)) ||
                           to_history < rule_.vanish_ratio * loss_fall || to_layers < rule_.vanish_vs_layers);
      if (explode || vanish) {
        Finding f = make_finding(explode ? "exploding_gradients" : "vanishing_gradients", Severity::warning,
                                 step, Phase::backward, layer, "");
        std::string relative;
        if (!std::isnan(to_history))
          relative +=
              num(to_history) + "x the median of its last " + std::to_string(history.size()) + " steps";
        if (explode && entry->above > 0) {
          relative += beyond_peak ? " and above its largest before, " + num(peak)
                                  : ", for " + std::to_string(entry->above) + " steps running";
          if (loss_rise > 1) relative += ", the step's loss " + num(loss_rise) + "x its median";
        }
        if (!std::isnan(to_layers))
          relative += (relative.empty() ? "" : "; ") + num(to_layers) + "x the median layer of this step";
        f.message = "gradient norm of " + std::string(layer) + " is " + num(norm) + " (" + relative + ")";
        f.suggestion = explode ? "clip gradients (e.g. max norm 1.0), lower the learning rate, or "
                                 "check for a loss spike in this step"
                               : "the layer stopped learning: look for dead or saturated units "
                                 "upstream, a detached path, or a too-small initialisation";
        f.evidence = {{"norm", norm},
                      {"history_median", history_median},
                      {"ratio_to_history", to_history},
                      {"peak_before", peak},
                      {"steps_above", entry->above},
                      {"layers_median", layers_median},
                      {"layers_median_rise", median_rise},
                      {"ratio_to_layers", to_layers},
                      {"loss_rise", loss_rise}};
        // Decades away from the median it tripped against.
        const double ratio = explode ? std::max(to_history, std::isnan(to_layers) ? 0.0 : to_layers)
                                     : std::min(std::isnan(to_history) ? 1.0 : to_history,
                                                std::isnan(to_layers) ? 1.0 : to_layers);
        f.magnitude =
            norm == 0 || ratio == 0 ? std::numeric_limits<double>::infinity() : std::abs(std::log10(ratio));
        if (explode) {
          exploded_.push_back(std::move(f));  // Note [One spike, one finding]
        } else {
          f.message += at_step(Phase::backward, step);
          out.emit(std::move(f));
        }
      }
      if (judged && std::isfinite(norm)) {
        history.push(norm);
        entry->peak = std::max(entry->peak, norm);
        ++entry->kept;
      }
    }
    if (!exploded_.empty()) emit_explosion(step, median_rise, out);
  }

  // Note [A step without a gradient]: every gradient exactly 0 for history_length steps running.
  void emit_flat(std::int64_t step, RuleContext& out) const {
    Finding f = make_finding("vanishing_gradients", Severity::warning, step, Phase::backward, "", "");
    f.message = "every gradient has been exactly 0 for " + std::to_string(flat_steps_) +
                " steps running: the loss gives the model nothing to learn" + at_step(Phase::backward, step);
    f.suggestion =
        "the loss is 0 and constant in the parameters: a reward or advantage that is always 0, "
        "a margin every example already meets, or a loss multiplied by 0";
    f.evidence = {{"steps", double(flat_steps_)}, {"layers", double(step_norms_.size())}};
    f.magnitude = std::numeric_limits<double>::infinity();
    out.emit(std::move(f));
  }

  // Note [One spike, one finding]: the layers that exploded in one step are one event (a hard
  // batch or a bad update lifts every layer's gradient at once: the zoo encoder, seed 8, step 234,
  // 5 layers 38-75x their median), reported once, at the layer furthest beyond its references,
  // naming the others.
  void emit_explosion(std::int64_t step, double median_rise, RuleContext& out) {
    const auto top =
        std::max_element(exploded_.begin(), exploded_.end(),
                         [](const Finding& a, const Finding& b) { return a.magnitude < b.magnitude; });
    Finding f = std::move(*top);
    const std::size_t others = exploded_.size() - 1;
    if (others > 0) {
      std::string names;
      std::size_t named = 0;
      for (auto it = exploded_.begin(); it != exploded_.end(); ++it) {
        if (it == top) continue;
        if (named == kNamedLayers) {
          names += " and " + std::to_string(others - named) + " more";
          break;
        }
        names += (named++ == 0 ? "" : ", ") + it->module;
      }
      f.message += "; " + std::to_string(others) + (others == 1 ? " other layer" : " other layers") +
                   " at once: " + names;
      if (median_rise > rule_.explode_ratio)
        f.message += " (the median layer " + num(median_rise) + "x its own history: the whole network)";
    }
    f.message += at_step(Phase::backward, step);
    f.evidence.emplace_back("layers_exploding", exploded_.size());
    out.emit(std::move(f));
  }

  void restart_step(std::int64_t /*step*/) override {
    layers_.for_each([](std::string_view, std::string_view, Layer& entry) { entry.seen = false; });
  }

  void summarize(RunSummary& summary) const override {
    summary.untracked_observations += layers_.untracked();
  }

 private:
  struct Layer {
    double sq = 0;                // sum of squared parameter-gradient norms this step
    bool seen = false;            // a gradient of the layer arrived this step
    bool nonfinite = false;       // a gradient of the layer held NaN or Inf this step
    std::optional<Ring> history;  // norms of the last history_length steps
    double peak = 0;              // the largest norm of the run so far
    std::int64_t kept = 0;        // norms kept so far (peak_after)
    std::int64_t above = 0;       // steps running above explode_ratio x the history's median
  };
  GradientRule rule_;
  std::size_t history_length_;
  KeyedState<Layer> layers_;
  Ring medians_{history_length_};                  // the median layer's norm of the last history_length steps
  std::optional<double> lowest_loss_;              // the lowest finite loss of the run before this step
  Ring losses_{history_length_};                   // the finite losses of the last history_length steps
  static constexpr std::size_t kRecentSteps = 10;  // Note [A loss still falling]
  Ring recent_losses_{kRecentSteps};               // the finite losses of the last kRecentSteps
  std::int64_t flat_steps_ = 0;                    // steps running whose every gradient was exactly 0
  std::optional<double> lowest_recent_median_;     // the lowest median of recent_losses_ so far
  std::vector<Finding> exploded_;  // this step's exploding layers (Note [One spike, one finding])
  static constexpr std::size_t kNamedLayers = 8;  // other layers named in the message
  std::vector<std::pair<std::string_view, Layer*>> step_layers_;
  std::vector<double> step_norms_;
};

}  // namespace

void register_rule_gradients(RuleRegistry& registry) {
  registry.add<GradientRule, Gradients>();
}

}  // namespace tfdebug::detail
