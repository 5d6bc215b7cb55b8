#include "tfdebug/robust/carlini_wagner.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "attacker.hpp"
#include "tfdebug/core/error.hpp"

namespace tfdebug::robust {
namespace {

// The margin the attack drives below -kappa: Z_label - max other (untargeted), max other - Z_target
// (targeted); and the class of that "other".
struct Margin {
  double value;
  std::int64_t other;
};
Margin margin(std::span<const float> z, std::int64_t goal, bool targeted) {
  std::int64_t other = -1;
  for (std::int64_t c = 0; c < static_cast<std::int64_t>(z.size()); ++c) {
    if (c != goal && (other < 0 || z[static_cast<std::size_t>(c)] > z[static_cast<std::size_t>(other)]))
      other = c;
  }
  const double diff =
      static_cast<double>(z[static_cast<std::size_t>(goal)]) - z[static_cast<std::size_t>(other)];
  return {targeted ? -diff : diff, other};
}

// Per example state of one chunk.
struct Example {
  double lower = 0, upper = std::numeric_limits<double>::infinity(), c = 0;
  double best_l2 = std::numeric_limits<double>::infinity();
  std::vector<float> best;
  std::vector<double> w, m, v;  // tanh-space variable and Adam's moments
  bool found = false, active = true;
  double last_check = std::numeric_limits<double>::infinity();
};

}  // namespace

AttackResult carlini_wagner_l2(interpret::GradientModel& model, std::span<const float> inputs,
                               std::span<const std::int64_t> labels, const AttackSettings& settings,
                               const CarliniWagnerOptions& options) {
  if (!std::isfinite(settings.clip_min) || !std::isfinite(settings.clip_max)) {
    throw Error("Carlini-Wagner needs a finite input range (clip_min, clip_max): it optimises in tanh space");
  }
  if (options.binary_search_steps < 1 || options.steps < 1) {
    throw Error("Carlini-Wagner needs at least 1 binary search step and 1 Adam step");
  }
  if (!(options.learning_rate > 0) || !(options.initial_const > 0) || !(options.confidence >= 0)) {
    throw Error("Carlini-Wagner: learning rate and initial const must be positive, confidence non-negative");
  }
  detail::Attacker a(model, inputs, labels, settings, "cw-l2");
  const auto nu = static_cast<std::size_t>(a.numel());
  const std::int64_t k = a.classes();
  const std::span<const float> mask = a.mask();
  const double lo = a.clip_min(), hi = a.clip_max(), half = (hi - lo) / 2;
  const auto to_input = [&](double w) { return lo + half * (std::tanh(w) + 1); };
  const auto to_tanh = [&](double x) {
    return std::atanh(std::clamp((x - lo) / half - 1, -1.0, 1.0) * 0.999999);
  };
  const std::int64_t check_every = std::max<std::int64_t>(1, (options.steps + 9) / 10);
  constexpr double kBeta1 = 0.9, kBeta2 = 0.999, kAdamEps = 1e-8;

  std::vector<float> adversarial(inputs.begin(), inputs.end());
  std::vector<float> rows, outputs, gradients;
  std::vector<std::int64_t> members;
  std::vector<double> loss;
  for (std::int64_t start = 0; start < a.examples(); start += a.max_batch()) {
    const std::int64_t count = std::min(a.max_batch(), a.examples() - start);
    std::vector<Example> ex(static_cast<std::size_t>(count));
    for (auto& e : ex) e.c = options.initial_const;
    for (std::int64_t search = 0; search < options.binary_search_steps; ++search) {
      for (std::int64_t r = 0; r < count; ++r) {
        Example& e = ex[static_cast<std::size_t>(r)];
        // Foolbox: with 10 or more search steps the last one tries the upper bound itself.
        if (options.binary_search_steps >= 10 && search + 1 == options.binary_search_steps && e.upper < 1e10)
          e.c = e.upper;
        const std::span<const float> x = a.input(start + r);
        e.w.resize(nu);
        for (std::size_t j = 0; j < nu; ++j) e.w[j] = to_tanh(x[j]);
        e.m.assign(nu, 0.0);
        e.v.assign(nu, 0.0);
        e.found = false;
        e.active = true;
        e.last_check = std::numeric_limits<double>::infinity();
      }
      for (std::int64_t step = 0; step < options.steps; ++step) {
        members.clear();
        for (std::int64_t r = 0; r < count; ++r) {
          if (ex[static_cast<std::size_t>(r)].active) members.push_back(r);
        }
        if (members.empty()) break;
        rows.resize(members.size() * nu);
        for (std::size_t q = 0; q < members.size(); ++q) {
          const Example& e = ex[static_cast<std::size_t>(members[q])];
          const std::span<const float> x = a.input(start + members[q]);
          for (std::size_t j = 0; j < nu; ++j) {
            rows[q * nu + j] = mask[j] != 0 ? a.clip(static_cast<float>(to_input(e.w[j]))) : x[j];
          }
        }
        outputs.assign(members.size() * static_cast<std::size_t>(k), 0.0f);
        gradients.assign(members.size() * nu, 0.0f);
        loss.assign(members.size(), 0.0);
        a.loss_gradient(
            rows,
            [&](std::span<const float> z, std::span<float> weights) {
              for (std::size_t q = 0; q < members.size(); ++q) {
                const Example& e = ex[static_cast<std::size_t>(members[q])];
                const std::int64_t i = start + members[q];
                const auto zq = z.subspan(q * static_cast<std::size_t>(k), static_cast<std::size_t>(k));
                const Margin mg = margin(zq, a.goal(i), a.targeted());
                const double term = mg.value + options.confidence;
                loss[q] = e.c * std::max(term, 0.0);
                if (term <= 0) continue;
                const double s = a.targeted() ? -1.0 : 1.0;  // d margin / d Z_goal
                weights[q * static_cast<std::size_t>(k) + static_cast<std::size_t>(a.goal(i))] =
                    static_cast<float>(e.c * s);
                weights[q * static_cast<std::size_t>(k) + static_cast<std::size_t>(mg.other)] =
                    static_cast<float>(-e.c * s);
              }
            },
            outputs, gradients);
        for (std::size_t q = 0; q < members.size(); ++q) {
          Example& e = ex[static_cast<std::size_t>(members[q])];
          const std::int64_t i = start + members[q];
          const std::span<const float> x = a.input(i);
          const std::span<const float> point(rows.data() + q * nu, nu);
          double l2 = 0;
          for (std::size_t j = 0; j < nu; ++j) l2 += static_cast<double>(point[j] - x[j]) * (point[j] - x[j]);
          const auto zq = std::span<const float>(outputs).subspan(q * static_cast<std::size_t>(k),
                                                                  static_cast<std::size_t>(k));
          // Success needs the margin kappa (the paper's criterion), not only the label.
          if (a.reached(zq, i) && -margin(zq, a.goal(i), a.targeted()).value >= options.confidence) {
            e.found = true;
            if (std::sqrt(l2) < e.best_l2) {
              e.best_l2 = std::sqrt(l2);
              e.best.assign(point.begin(), point.end());
            }
          }
          loss[q] += l2;
          const double t = static_cast<double>(step + 1);
          for (std::size_t j = 0; j < nu; ++j) {
            if (mask[j] == 0) continue;
            const double th = std::tanh(e.w[j]);
            const double g =
                (2 * (static_cast<double>(point[j]) - x[j]) + gradients[q * nu + j]) * half * (1 - th * th);
            e.m[j] = kBeta1 * e.m[j] + (1 - kBeta1) * g;
            e.v[j] = kBeta2 * e.v[j] + (1 - kBeta2) * g * g;
            const double mh = e.m[j] / (1 - std::pow(kBeta1, t)), vh = e.v[j] / (1 - std::pow(kBeta2, t));
            e.w[j] -= options.learning_rate * mh / (std::sqrt(vh) + kAdamEps);
          }
          if (options.abort_early && step % check_every == 0) {
            if (!(loss[q] <= 0.9999 * e.last_check)) e.active = false;
            e.last_check = loss[q];
          }
        }
      }
      for (Example& e : ex) {
        if (e.found) {
          e.upper = std::min(e.upper, e.c);
        } else {
          e.lower = std::max(e.lower, e.c);
        }
        e.c = std::isinf(e.upper) ? e.c * 10 : (e.lower + e.upper) / 2;
      }
    }
    for (std::int64_t r = 0; r < count; ++r) {
      const Example& e = ex[static_cast<std::size_t>(r)];
      if (!e.best.empty())
        std::copy(
            e.best.begin(), e.best.end(),
            adversarial.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(start + r) * nu));
    }
  }
  return a.finish(std::move(adversarial));
}

}  // namespace tfdebug::robust
