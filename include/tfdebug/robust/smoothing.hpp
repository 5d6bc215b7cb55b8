// Randomized smoothing (Cohen, Rosenfeld and Kolter 2019): the smoothed classifier
// g(x) = argmax_c P(f(x + e) = c), e ~ N(0, sigma^2 I), predicted with abstention and certified:
// g's answer cannot change within the L2 radius sigma * Phi^-1(pA) of x, where pA is a
// Clopper-Pearson lower bound on the top class's probability (docs/robustness.md).
//
//   tfdebug::robust::SmoothingOptions o;  // sigma 0.25, n0 100, n 100000, alpha 0.001
//   o.sigma = 0.5;
//   const auto c = tfdebug::robust::certify(model, x, o);
//   if (!c.abstained()) std::printf("class %lld within L2 %.3f\n", (long long)c.predicted, c.radius);
//
// f is the model's argmax over its outputs. Noise is drawn from seeded streams (one per sample,
// so answers do not depend on max_batch) and evaluated max_batch points at a time.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "tfdebug/interpret/model.hpp"

namespace tfdebug::robust {

struct SmoothingOptions {
  double sigma = 0.25;      // the noise's standard deviation, in input units
  std::int64_t n0 = 100;    // certify: samples that choose the class
  std::int64_t n = 100000;  // samples that estimate its probability (predict: all samples)
  double alpha = 0.001;     // failure probability of the certificate or the prediction
  std::uint64_t seed = 0;
  std::int64_t max_batch = 1000;
};

inline constexpr std::int64_t kAbstain = -1;

struct Certificate {
  std::int64_t predicted = kAbstain;  // kAbstain when pA < 1/2
  std::int64_t selected = kAbstain;   // the class the n0 samples chose
  std::int64_t count = 0;             // of the n estimation samples, those of `selected`
  std::int64_t samples = 0;           // n
  double p_lower = 0;                 // Clopper-Pearson lower bound on P(f(x + e) = selected)
  double radius = 0;                  // sigma * Phi^-1(p_lower); 0 when abstaining
  std::int64_t evaluations = 0;       // model evaluations: n0 + n
  bool abstained() const { return predicted == kAbstain; }
};

struct SmoothedPrediction {
  std::int64_t predicted = kAbstain;  // kAbstain when the top-2 test's p-value exceeds alpha
  std::int64_t top_count = 0, second_count = 0;
  double p_value = 1;  // two-sided binomial test of the top two counts against 1/2
  std::int64_t evaluations = 0;
  bool abstained() const { return predicted == kAbstain; }
};

// CERTIFY: n0 samples choose the class cA, n more count it; pA = the one-sided Clopper-Pearson
// lower bound at alpha; abstain if pA < 1/2, else radius sigma * Phi^-1(pA).
Certificate certify(interpret::ForwardModel& model, std::span<const float> x,
                    const SmoothingOptions& options = {});

// PREDICT: n samples; the top two classes' counts nA, nB; abstain unless the binomial test of
// nA out of nA + nB against p = 1/2 has p-value <= alpha.
SmoothedPrediction predict(interpret::ForwardModel& model, std::span<const float> x,
                           const SmoothingOptions& options = {});

// The class counts of f(x + e) over `samples` noise draws from streams first .. first+samples-1
// of the seed (certify uses streams 0..n0-1 for selection and n0..n0+n-1 for estimation).
std::vector<std::int64_t> noisy_class_counts(interpret::ForwardModel& model, std::span<const float> x,
                                             double sigma, std::int64_t samples, std::uint64_t first_stream,
                                             std::uint64_t seed, std::int64_t max_batch);

}  // namespace tfdebug::robust
