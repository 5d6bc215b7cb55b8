// Rule saturation (docs/rules.md): tanh and sigmoid outputs within a margin of their asymptotes,
// and GELU inputs in its flat negative tail, from fixed histogram bins (histogram_fixed).
#include <algorithm>
#include <any>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "rule_text.hpp"
#include "tfdebug/core/histogram.hpp"
#include "tfdebug/session/rule_registry.hpp"
#include "tfdebug/session/rules/saturation.hpp"

namespace tfdebug::detail {
namespace {

enum class Kind : std::uint8_t { none, tanh, sigmoid, gelu };

// Finite values in the outer bins of `bins` equal bins over [lo, hi], or beyond them: one
// vectorised pass over contiguous f32 (the outputs of a model's activations, count_outside
// comparing in f32); other types and layouts through histogram_fixed.
std::int64_t count_tails(const TensorView& v, int bins, double lo, double hi) {
  if (v.dtype() == DType::f32 && v.is_contiguous()) {
    const double width = (hi - lo) / bins;
    return count_outside(v, static_cast<float>(lo + width), static_cast<float>(hi - width));
  }
  const Histogram h = histogram_fixed(v, bins, lo, hi);
  return h.counts.front() + h.counts.back() + h.below + h.above;
}

class Saturation final : public Rule {
 public:
  Saturation(const RunConfig& /*config*/, const SaturationRule& settings) : rule_(settings) {}

  Interest interest() const override { return Interest::of(Role::output, Phase::forward); }
  Needs needs(const Observation& o) const override {
    if (kind_of(o) == Kind::none) return {};
    return {Need::range, /*measure=*/true};
  }
  // The saturated fraction.
  std::any measure(const Observation& o, const Stats& stats, bool /*has_zero*/) override {
    const Kind kind = kind_of(o);
    if (kind == Kind::gelu) {
      const Histogram h = histogram_fixed(*o.input, 1, -rule_.gelu_cutoff, -rule_.gelu_cutoff + 1.0);
      const std::int64_t inputs_finite = h.counts.front() + h.below + h.above;
      return inputs_finite == 0 ? 0.0 : double(h.below) / double(inputs_finite);
    }
    // Fixed bins whose outer bins are the tails (the margin is rounded to a whole bin).
    const bool tanh = kind == Kind::tanh;
    const double lo = tanh ? -1.0 : 0.0;
    const int bins = std::max(2, static_cast<int>(std::lround(1.0 / rule_.margin * (tanh ? 2.0 : 1.0))));
    const std::int64_t finite = stats.finite();
    if (finite == 0) return 0.0;
    return double(count_tails(o.value, bins, lo, 1.0)) / double(finite);
  }

  void observe(const RuleInput& in, RuleContext& out) override {
    const double* measured = std::any_cast<double>(&in.measured);
    if (measured == nullptr || *measured < rule_.max_fraction) return;
    const double fraction = *measured;
    const Observation& o = in.observation;
    Finding f = make_finding("saturation", Severity::warning, o.step, o.phase, o.module, o.op);
    if (kind_of(o) == Kind::gelu) {
      f.message = num(100 * fraction) + "% of " + where(o.module, o.op) + "'s inputs are below -" +
                  num(rule_.gelu_cutoff) + ", GELU's flat negative tail, where its gradient vanishes" +
                  at_step(o.phase, o.step);
      f.evidence = {{"saturated_fraction", fraction}, {"gelu_cutoff", rule_.gelu_cutoff}};
    } else {
      const bool tanh = kind_of(o) == Kind::tanh;
      f.message = num(100 * fraction) + "% of " + where(o.module, o.op) + "'s outputs are within " +
                  num(rule_.margin) + " of " + (tanh ? "+-1" : "0 or 1") + ", where its gradient vanishes" +
                  at_step(o.phase, o.step);
      f.evidence = {{"saturated_fraction", fraction}, {"margin", rule_.margin}};
    }
    f.suggestion =
        "normalise the pre-activation (LayerNorm), shrink the initialisation or the "
        "learning rate, or use a non-saturating activation";
    out.emit(std::move(f));
  }

 private:
  static Kind kind_of(const Observation& o) {
    if (!is_floating(o.value.dtype()) || o.value.numel() == 0) return Kind::none;
    if (contains_word(o.op, "tanh")) return Kind::tanh;
    if (contains_word(o.op, "sigmoid")) return Kind::sigmoid;
    if (contains_word(o.op, "gelu") && o.input != nullptr && is_floating(o.input->dtype()) &&
        o.input->numel() > 0)
      return Kind::gelu;
    return Kind::none;
  }

  SaturationRule rule_;
};

}  // namespace

void register_rule_saturation(RuleRegistry& registry) {
  registry.add<SaturationRule, Saturation>();
}

}  // namespace tfdebug::detail
