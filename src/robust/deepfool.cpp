#include "tfdebug/robust/deepfool.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "attacker.hpp"
#include "tfdebug/core/error.hpp"

namespace tfdebug::robust {

AttackResult deepfool(interpret::GradientModel& model, std::span<const float> inputs,
                      std::span<const std::int64_t> labels, const AttackSettings& settings,
                      const DeepFoolOptions& options) {
  if (!settings.targets.empty())
    throw Error("DeepFool is untargeted (it looks for the nearest boundary): give no target class");
  if (options.steps < 1) throw Error("DeepFool needs at least 1 step, got " + std::to_string(options.steps));
  if (options.candidates < 2)
    throw Error("DeepFool needs at least 2 candidate classes, got " + std::to_string(options.candidates));
  if (!(options.overshoot >= 0)) throw Error("DeepFool's overshoot must be non-negative");
  detail::Attacker a(model, inputs, labels, settings, "deepfool");
  const auto nu = static_cast<std::size_t>(a.numel());
  const std::int64_t k = a.classes();
  const auto ku = static_cast<std::size_t>(k);
  const std::int64_t candidates = std::min(options.candidates, k);
  const std::span<const float> mask = a.mask();
  const auto scale = static_cast<float>(1 + options.overshoot);

  std::vector<float> adversarial(inputs.begin(), inputs.end());
  std::vector<float> rows, outputs, gradients;
  std::vector<std::int64_t> members, keep;
  for (std::int64_t start = 0; start < a.examples(); start += a.max_batch()) {
    const std::int64_t count = std::min(a.max_batch(), a.examples() - start);
    // Candidates: the top classes at the input, the label excluded (Foolbox).
    std::vector<std::vector<std::int64_t>> others(static_cast<std::size_t>(count));
    std::vector<std::vector<double>> total(static_cast<std::size_t>(count), std::vector<double>(nu, 0.0));
    std::vector<double> best_distance(static_cast<std::size_t>(count));
    members.clear();
    for (std::int64_t r = 0; r < count; ++r) {
      if (a.predicted_before(start + r) == a.goal(start + r))
        members.push_back(r);  // else: already adversarial
    }
    for (std::int64_t step = 0; step < options.steps && !members.empty(); ++step) {
      rows.resize(members.size() * nu);
      for (std::size_t q = 0; q < members.size(); ++q) {
        std::copy_n(adversarial.begin() +
                        static_cast<std::ptrdiff_t>(static_cast<std::size_t>(start + members[q]) * nu),
                    nu, rows.begin() + static_cast<std::ptrdiff_t>(q * nu));
      }
      std::vector<std::vector<double>> step_dir(members.size(), std::vector<double>(nu, 0.0));
      std::fill(best_distance.begin(), best_distance.end(), std::numeric_limits<double>::infinity());
      for (std::int64_t rank = 1; rank < candidates && !members.empty(); ++rank) {
        outputs.assign(members.size() * ku, 0.0f);
        gradients.assign(members.size() * nu, 0.0f);
        const auto other = [&](std::size_t q, std::span<const float> z) -> std::int64_t {
          auto& list = others[static_cast<std::size_t>(members[q])];
          if (list.empty()) {  // first step: rank the classes at the input
            std::vector<std::int64_t> order(ku);
            std::iota(order.begin(), order.end(), 0);
            std::stable_sort(order.begin(), order.end(), [&](std::int64_t p, std::int64_t s) {
              return z[static_cast<std::size_t>(p)] > z[static_cast<std::size_t>(s)];
            });
            for (const std::int64_t c : order) {
              if (c != a.goal(start + members[q])) list.push_back(c);
            }
          }
          return list[static_cast<std::size_t>(rank - 1)];
        };
        a.loss_gradient(
            rows,
            [&](std::span<const float> z, std::span<float> weights) {
              for (std::size_t q = 0; q < members.size(); ++q) {
                const std::int64_t c = other(q, z.subspan(q * ku, ku));
                weights[q * ku + static_cast<std::size_t>(c)] = 1.0f;  // f'_c = f_c - f_label
                weights[q * ku + static_cast<std::size_t>(a.goal(start + members[q]))] = -1.0f;
              }
            },
            outputs, gradients);
        if (rank == 1) {  // the outputs at the current point: drop the examples already across
          keep.clear();
          for (std::size_t q = 0; q < members.size(); ++q) {
            if (!a.reached(std::span<const float>(outputs).subspan(q * ku, ku), start + members[q]))
              keep.push_back(static_cast<std::int64_t>(q));
          }
          if (keep.size() != members.size()) {
            for (std::size_t p = 0; p < keep.size(); ++p) {
              const auto q = static_cast<std::size_t>(keep[p]);
              members[p] = members[q];
              std::copy_n(rows.begin() + static_cast<std::ptrdiff_t>(q * nu), nu,
                          rows.begin() + static_cast<std::ptrdiff_t>(p * nu));
              std::copy_n(outputs.begin() + static_cast<std::ptrdiff_t>(q * ku), ku,
                          outputs.begin() + static_cast<std::ptrdiff_t>(p * ku));
              std::copy_n(gradients.begin() + static_cast<std::ptrdiff_t>(q * nu), nu,
                          gradients.begin() + static_cast<std::ptrdiff_t>(p * nu));
            }
            members.resize(keep.size());
            rows.resize(keep.size() * nu);
          }
        }
        for (std::size_t q = 0; q < members.size(); ++q) {
          const std::int64_t r = members[q];
          const std::int64_t c = others[static_cast<std::size_t>(r)][static_cast<std::size_t>(rank - 1)];
          const double f = static_cast<double>(outputs[q * ku + static_cast<std::size_t>(c)]) -
                           outputs[q * ku + static_cast<std::size_t>(a.goal(start + r))];
          // Note [DeepFool in a box]: the step goes along +g (it raises f_c - f_label); an element
          // at a bound whose gradient points out of the box cannot move, so it is left out of the
          // linearisation (its norm and its step), which is then the boundary's distance through
          // the elements that can move. Without this, a step spent most of its length on pixels
          // held at 0 or 1 by the clip, and an example could end its steps short of the boundary.
          const float* point = rows.data() + q * nu;
          float* g = gradients.data() + q * nu;
          for (std::size_t j = 0; j < nu; ++j) {
            const bool held =
                (point[j] <= a.clip_min() && g[j] < 0) || (point[j] >= a.clip_max() && g[j] > 0);
            g[j] = held ? 0.0f : g[j];
          }
          double norm2 = 0;
          for (std::size_t j = 0; j < nu; ++j) {
            const double gj = gradients[q * nu + j] * mask[j];
            norm2 += gj * gj;
          }
          if (norm2 == 0) continue;  // this boundary cannot be reached through the free elements
          const double distance = std::abs(f) / std::sqrt(norm2);
          if (distance < best_distance[static_cast<std::size_t>(r)]) {
            best_distance[static_cast<std::size_t>(r)] = distance;
            const double size = (std::abs(f) + 1e-4) / norm2;
            for (std::size_t j = 0; j < nu; ++j) step_dir[q][j] = size * gradients[q * nu + j] * mask[j];
          }
        }
      }
      for (std::size_t q = 0; q < members.size(); ++q) {
        const auto r = static_cast<std::size_t>(members[q]);
        const std::span<const float> x = a.input(start + members[q]);
        float* out = adversarial.data() + (static_cast<std::size_t>(start) + r) * nu;
        for (std::size_t j = 0; j < nu; ++j) {
          total[r][j] += step_dir[q][j];
          out[j] = a.clip(x[j] + scale * static_cast<float>(total[r][j]));
          // What the clip took off is not kept: a later step back into the box moves the point
          // at once, rather than first undoing the part of the total beyond the bound.
          if (out[j] == a.clip_min() || out[j] == a.clip_max()) total[r][j] = (out[j] - x[j]) / scale;
        }
      }
    }
  }
  return a.finish(std::move(adversarial));
}

}  // namespace tfdebug::robust
