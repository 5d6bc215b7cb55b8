// Settings of the rule `spectral` (docs/rules.md: spectral norm and stable rank of weight
// matrices by power iteration, every k steps).
//
//   config.rules.get<tfdebug::SpectralRule>().every = 10;   // [rules.spectral] every = 10
#pragma once

#include <cstdint>
#include <string_view>

#include "tfdebug/core/error.hpp"
#include "tfdebug/session/rule_settings.hpp"

namespace tfdebug {

struct SpectralRule {
  static constexpr std::string_view kSection = "spectral";
  bool enabled = true;
  // Steps between measurements of each weight matrix: spectral growth and rank collapse take
  // hundreds of steps, and a measurement costs 2 x max_iterations products with the matrix in
  // f64 (every 50 steps was 4% of a small MLP's step).
  int every = 200;
  // Power iteration steps (warm-started from the last vector): a random matrix's top singular
  // values are close, so a cold start converges slowly; 30 bound its cost (2 x 30 products with
  // the matrix every `every` steps) and leave the estimate within a few percent there.
  int max_iterations = 30;
  // Relative change of the estimate that stops iterating: the rule judges 10x growth and stable
  // ranks against 1.5, so 4 digits are plenty (1e-6 took up to 100 iterations of a cold start).
  double tolerance = 1e-4;
  double min_stable_rank = 1.5;  // ||W||_F^2 / sigma_max^2 below this: rank collapse ...
  // ... of matrices whose smaller side is at least this: a classifier head with four outputs or a
  // small convolution is low-rank by its task (stable ranks of 1.2-1.5 in healthy runs).
  std::int64_t min_collapse_dim = 32;
  // Growth is judged between consecutive measurements, as a rate (Note [Spectral growth] in
  // src/session/rules/spectral.cpp): sigma_max above `max_growth` times the measurement before ...
  double max_growth = 3.0;
  // ... or, for the measurement after the first (taken at initialisation, which training leaves
  // by several times: up to 6.0x in the first 200 steps of the zoo's healthy runs), above this.
  double max_growth_from_init = 10.0;
  std::int64_t max_elements = 1 << 24;  // larger matrices are skipped

  static void describe(RuleKeys<SpectralRule>& keys) {
    keys.flag("enabled", &SpectralRule::enabled)
        .integer("every", &SpectralRule::every, Range::positive)
        .integer("max_iterations", &SpectralRule::max_iterations, Range::positive)
        .real("tolerance", &SpectralRule::tolerance, Range::positive)
        .real("min_stable_rank", &SpectralRule::min_stable_rank)
        .integer("min_collapse_dim", &SpectralRule::min_collapse_dim)
        .real("max_growth", &SpectralRule::max_growth, Range::above_one)
        .real("max_growth_from_init", &SpectralRule::max_growth_from_init, Range::above_one)
        .integer("max_elements", &SpectralRule::max_elements);
  }
};

}  // namespace tfdebug
