#include "tfdebug/robust/gradient_attacks.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <string>
#include <vector>

#include "../interpret/random.hpp"
#include "attacker.hpp"
#include "tfdebug/core/error.hpp"

namespace tfdebug::robust {
namespace {

float sign(float v) {
  return v > 0 ? 1.0f : (v < 0 ? -1.0f : 0.0f);
}

// The cross-entropy ascent gradients (masked) of the examples `members` at `rows`.
void ascent_gradients(detail::Attacker& a, std::span<const std::int64_t> members, std::span<const float> rows,
                      std::vector<float>& outputs, std::vector<float>& gradients) {
  const std::int64_t k = a.classes();
  const std::int64_t numel = a.numel();
  outputs.assign(members.size() * static_cast<std::size_t>(k), 0.0f);
  gradients.assign(members.size() * static_cast<std::size_t>(numel), 0.0f);
  a.loss_gradient(
      rows,
      [&](std::span<const float> z, std::span<float> w) {
        for (std::size_t r = 0; r < members.size(); ++r) {
          detail::cross_entropy_weights(
              z.subspan(r * static_cast<std::size_t>(k), static_cast<std::size_t>(k)), a.goal(members[r]),
              a.targeted(), w.subspan(r * static_cast<std::size_t>(k), static_cast<std::size_t>(k)));
        }
      },
      outputs, gradients);
  const std::span<const float> mask = a.mask();
  for (std::size_t r = 0; r < members.size(); ++r) {
    for (std::int64_t j = 0; j < numel; ++j)
      gradients[r * static_cast<std::size_t>(numel) + static_cast<std::size_t>(j)] *=
          mask[static_cast<std::size_t>(j)];
  }
}

void check_positive(double value, const char* what) {
  if (!(value > 0) || !std::isfinite(value)) {
    throw Error(std::string(what) + " must be a positive number, got " + std::to_string(value));
  }
}

}  // namespace

AttackResult fgsm(interpret::GradientModel& model, std::span<const float> inputs,
                  std::span<const std::int64_t> labels, const AttackSettings& settings,
                  const FgsmOptions& options) {
  check_positive(options.eps, "FGSM's eps");
  detail::Attacker a(model, inputs, labels, settings, "fgsm");
  const std::int64_t numel = a.numel();
  std::vector<float> adversarial(inputs.begin(), inputs.end());
  std::vector<float> outputs, gradients;
  std::vector<std::int64_t> members;
  const auto eps = static_cast<float>(options.eps);
  for (std::int64_t start = 0; start < a.examples(); start += a.max_batch()) {
    const std::int64_t count = std::min(a.max_batch(), a.examples() - start);
    members.resize(static_cast<std::size_t>(count));
    for (std::int64_t r = 0; r < count; ++r) members[static_cast<std::size_t>(r)] = start + r;
    ascent_gradients(
        a, members,
        inputs.subspan(static_cast<std::size_t>(start * numel), static_cast<std::size_t>(count * numel)),
        outputs, gradients);
    for (std::int64_t j = 0; j < count * numel; ++j) {
      const auto u = static_cast<std::size_t>(start * numel + j);
      adversarial[u] = a.clip(inputs[u] + eps * sign(gradients[static_cast<std::size_t>(j)]));
    }
  }
  return a.finish(std::move(adversarial));
}

AttackResult pgd(interpret::GradientModel& model, std::span<const float> inputs,
                 std::span<const std::int64_t> labels, const AttackSettings& settings,
                 const PgdOptions& options) {
  check_positive(options.eps, "PGD's eps");
  check_positive(options.step_size, "PGD's step size");
  if (options.steps < 1) throw Error("PGD needs at least 1 step, got " + std::to_string(options.steps));
  if (options.restarts < 1)
    throw Error("PGD needs at least 1 restart, got " + std::to_string(options.restarts));
  const bool linf = options.norm == Norm::linf;
  detail::Attacker a(model, inputs, labels, settings, linf ? "pgd-linf" : "pgd-l2");
  const std::int64_t numel = a.numel();
  const auto nu = static_cast<std::size_t>(numel);
  const std::span<const float> mask = a.mask();
  const double free_elements = std::max(1.0, static_cast<double>(std::count(mask.begin(), mask.end(), 1.0f)));
  const auto eps = static_cast<float>(options.eps);

  std::vector<float> adversarial(inputs.begin(), inputs.end());
  std::vector<std::uint8_t> done(static_cast<std::size_t>(a.examples()), 0);
  std::vector<float> rows, outputs, gradients;
  std::vector<std::int64_t> members;

  // Projection onto the ball around x, then into the range: for L-inf the two are boxes and this
  // is the exact projection onto their intersection; for L2, clipping only moves elements toward
  // x, so the norm stays within eps.
  const auto project = [&](std::span<const float> x, std::span<float> point) {
    if (linf) {
      for (std::size_t j = 0; j < nu; ++j) point[j] = a.clip(x[j] + std::clamp(point[j] - x[j], -eps, eps));
      return;
    }
    double norm = 0;
    for (std::size_t j = 0; j < nu; ++j) norm += static_cast<double>(point[j] - x[j]) * (point[j] - x[j]);
    norm = std::sqrt(norm);
    const double scale = norm > options.eps ? options.eps / norm : 1.0;
    for (std::size_t j = 0; j < nu; ++j)
      point[j] = a.clip(x[j] + static_cast<float>((point[j] - x[j]) * scale));
  };

  for (std::int64_t start = 0; start < a.examples(); start += a.max_batch()) {
    const std::int64_t count = std::min(a.max_batch(), a.examples() - start);
    for (std::int64_t restart = 0; restart < options.restarts; ++restart) {
      members.clear();
      for (std::int64_t i = start; i < start + count; ++i) {
        if (done[static_cast<std::size_t>(i)] == 0) members.push_back(i);
      }
      if (members.empty()) break;
      rows.resize(members.size() * nu);
      for (std::size_t r = 0; r < members.size(); ++r) {
        const std::int64_t i = members[r];
        const std::span<const float> x = a.input(i);
        const std::span<float> point(rows.data() + r * nu, nu);
        std::copy(x.begin(), x.end(), point.begin());
        if (!options.random_start) continue;
        // Note [Seeded streams]: stream (example, restart), whatever the batch.
        interpret::detail::Stream stream(
            a.seed(), static_cast<std::uint64_t>(i) * 0x10000u + static_cast<std::uint64_t>(restart));
        if (linf) {
          for (std::size_t j = 0; j < nu; ++j)
            point[j] += mask[j] * eps * static_cast<float>(2 * stream.uniform() - 1);
        } else {  // uniform in the ball of the free elements: a normal direction, radius eps u^(1/d)
          std::vector<double> direction(nu, 0.0);
          double norm = 0;
          for (std::size_t j = 0; j < nu; ++j) {
            if (mask[j] == 0) continue;
            direction[j] = stream.normal();
            norm += direction[j] * direction[j];
          }
          const double radius = options.eps * std::pow(stream.uniform(), 1.0 / free_elements);
          for (std::size_t j = 0; j < nu; ++j) {
            if (norm > 0) point[j] += static_cast<float>(direction[j] / std::sqrt(norm) * radius);
          }
        }
        project(x, point);
      }
      for (std::int64_t step = 0; step < options.steps; ++step) {
        double alpha = options.step_size;
        if (options.schedule == StepSchedule::cosine) {
          alpha *= (1 + std::cos(std::numbers::pi * static_cast<double>(step) /
                                 static_cast<double>(options.steps))) /
                   2;
        }
        ascent_gradients(a, members, rows, outputs, gradients);
        for (std::size_t r = 0; r < members.size(); ++r) {
          const std::span<float> point(rows.data() + r * nu, nu);
          const float* g = gradients.data() + r * nu;
          if (linf) {
            for (std::size_t j = 0; j < nu; ++j) point[j] += static_cast<float>(alpha) * sign(g[j]);
          } else {
            double norm = 0;
            for (std::size_t j = 0; j < nu; ++j) norm += static_cast<double>(g[j]) * g[j];
            norm = std::sqrt(norm);
            if (norm > 0) {
              for (std::size_t j = 0; j < nu; ++j) point[j] += static_cast<float>(alpha * g[j] / norm);
            }
          }
          project(a.input(members[r]), point);
          if (options.on_step) options.on_step(members[r], step + 1, point);
        }
      }
      for (std::size_t r = 0; r < members.size(); ++r) {
        std::copy_n(
            rows.data() + r * nu, nu,
            adversarial.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(members[r]) * nu));
      }
      if (restart + 1 == options.restarts) break;
      // Which succeeded: those keep this run's result; the others start again.
      outputs.assign(members.size() * static_cast<std::size_t>(a.classes()), 0.0f);
      a.forward(rows, outputs);
      for (std::size_t r = 0; r < members.size(); ++r) {
        const auto z = std::span<const float>(outputs).subspan(r * static_cast<std::size_t>(a.classes()),
                                                               static_cast<std::size_t>(a.classes()));
        if (a.reached(z, members[r])) done[static_cast<std::size_t>(members[r])] = 1;
      }
    }
  }
  return a.finish(std::move(adversarial));
}

}  // namespace tfdebug::robust
