// Carlini-Wagner L2 (2017): the smallest L2 perturbation that gives a logit margin of at least
// `confidence`, found by Adam in tanh space, x' = lo + (hi - lo)(tanh w + 1)/2 (so x' stays in
// range), minimising ||x' - x||^2 + c * max(Z_label - max_{i != label} Z_i + kappa, 0), with a
// binary search over c per example: on success c's upper bound is c, on failure its lower bound,
// and c grows x10 while no upper bound is known. The successful result with the smallest L2 is
// kept. This is the paper's and Foolbox's algorithm (torchattacks' fixed c rarely succeeds).
//
//   tfdebug::robust::AttackSettings s{.clip_min = 0, .clip_max = 1};
//   auto r = tfdebug::robust::carlini_wagner_l2(model, x, labels, s, {.confidence = 0.5});
//
// Defaults: Foolbox's 9 search steps, lr 0.01, c0 1e-3, abort early; 1000 Adam steps per search
// step (Foolbox: 10000; enough for small models, raise it for deep ones).
#pragma once

#include <cstdint>
#include <span>

#include "tfdebug/robust/attack.hpp"

namespace tfdebug::robust {

struct CarliniWagnerOptions {
  std::int64_t binary_search_steps = 9;
  std::int64_t steps = 1000;  // Adam steps per value of c
  double learning_rate = 0.01;
  double initial_const = 1e-3;
  double confidence = 0;  // kappa: the logit margin a success needs
  // Stop a run of Adam steps when the objective has not fallen by 0.01% over steps/10 steps.
  bool abort_early = true;
};

AttackResult carlini_wagner_l2(interpret::GradientModel& model, std::span<const float> inputs,
                               std::span<const std::int64_t> labels, const AttackSettings& settings,
                               const CarliniWagnerOptions& options);

}  // namespace tfdebug::robust
