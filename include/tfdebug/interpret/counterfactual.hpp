// Counterfactuals: the smallest change of an input that gives the output you want ([G],
// tfdebug/interpret/model.hpp), after Wachter et al. 2017:
//
//   argmin over x' of  lambda (f_t(x') - y')^2 + d(x, x')
//
// with lambda raised (x10, as alibi does while no bound is known) until |f_t(x') - y'| <= tol,
// then bisected between the last invalid and the first valid lambda for the closest valid x'.
// d is the L1 distance with each feature scaled by its median absolute deviation over the
// training data (sparse answers: few features move), or the squared L2 distance. The L1 term is
// handled by its proximal step (soft thresholding), so a feature that need not move stays exactly
// where it was.
//
//   tfdebug::interpret::CounterfactualOptions o;
//   o.target = 1;           // the output to move ...
//   o.wanted = 0.9;         // ... to this value (a probability, for a model that gives them)
//   o.training = rows;      // for the MADs
//   o.immutable = {2};      // features that must not change
//   const auto cf = tfdebug::interpret::wachter_counterfactual(model, x, o);
//   // cf.valid, cf.x, cf.output, cf.changed (features moved), cf.distance
//
// A feature whose MAD is 0 (most rows share one value: DiCE fails there, DiCE#227) is scaled by
// its standard deviation instead, or by 1 when that is 0 too.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "tfdebug/interpret/model.hpp"

namespace tfdebug::interpret {

enum class Distance { l1_mad, l2 };

struct CounterfactualOptions {
  std::int64_t target = 0;  // the output whose value is wanted
  double wanted = 1.0;      // y' (alibi's target_proba)
  double tolerance = 0.05;  // valid when |f_t(x') - y'| <= tolerance
  Distance distance = Distance::l1_mad;
  std::vector<float> training;          // rows, for the MADs (l1_mad); empty: every MAD 1
  std::vector<std::int64_t> immutable;  // features that keep x's value
  std::vector<float> lower, upper;      // per feature bounds of x' (empty: none)
  double lambda = 0.1;                  // the first lambda (alibi's lam_init)
  std::int64_t lambda_steps = 10;       // raises and bisections of lambda (max_lam_steps)
  std::int64_t iterations = 1000;       // gradient steps per lambda (max_iter)
  std::int64_t early_stop = 50;         // stop a lambda's descent after this many steps without progress
  double learning_rate = 0.1;
};

struct Counterfactual {
  bool valid = false;         // a counterfactual within tolerance was found
  std::vector<float> x;       // the closest valid one (or, if none, the last tried)
  double output = 0;          // f_t there
  double distance = 0;        // d(x, x') of the options' distance
  std::int64_t changed = 0;   // features that moved (sparsity)
  double lambda = 0;          // of the answer
  std::vector<double> scale;  // per feature: its MAD (or the fallback) under l1_mad; 1 under l2
  std::int64_t evaluations = 0;
};

Counterfactual wachter_counterfactual(GradientModel& model, std::span<const float> x,
                                      const CounterfactualOptions& options);

}  // namespace tfdebug::interpret
