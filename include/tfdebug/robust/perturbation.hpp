// Perturbation testing: how a classifier's answers hold up as its inputs are corrupted more and
// more (docs/robustness.md, "Perturbation testing"). For each intensity, every input is perturbed
// `samples` times; the curves give accuracy, agreement with the clean prediction and confidence;
// the robustness score is the normalised area under the agreement curve; hotspots are the
// features (or tokens) that flip predictions when perturbed alone; failure modes group the
// wrong answers by (reference class -> predicted class).
//
//   tfdebug::robust::PerturbationOptions o;
//   o.kind = tfdebug::robust::Perturbation::gaussian;
//   o.intensities = {0, 0.1, 0.2, 0.5};
//   const auto r = tfdebug::robust::perturbation_test(model, rows, labels, o);
//   std::printf("score %.3f, P(flip) at 0.5: %.3f\n", r.score, r.points.back().flip_rate);
//
// Noise comes from seeded streams, one per (input, sample) and the same at every intensity
// (common random numbers): for Gaussian and uniform noise a larger intensity scales the same
// draw, so on a linear model each flip is monotone in the intensity.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "tfdebug/interpret/model.hpp"

namespace tfdebug::robust {

enum class Perturbation {
  gaussian,           // x + intensity * N(0, 1), every element
  uniform,            // x + U(-intensity, intensity), every element
  salt_and_pepper,    // each element, with probability intensity, becomes low or high (1/2 each)
  feature_dropout,    // each element, with probability intensity, becomes fill
  token_masking,      // each token (a slice along the first input dimension), with probability
                      // intensity, becomes fill (a mask id, or zeros for embeddings)
  token_replacement,  // each token, with probability intensity, becomes a random token: a random
                      // id in [0, vocabulary) for id inputs, else another position's slice
};

// "gaussian", "uniform", "salt-and-pepper", "feature-dropout", "token-masking",
// "token-replacement"; tfdebug::Error listing them for any other name.
Perturbation parse_perturbation(const std::string& name);
const char* perturbation_name(Perturbation kind);

struct PerturbationOptions {
  Perturbation kind = Perturbation::gaussian;
  std::vector<double> intensities = {0, 0.05, 0.1, 0.2, 0.3, 0.5};
  std::int64_t samples = 20;    // perturbed copies of each input per intensity
  float low = 0, high = 1;      // salt-and-pepper's values
  float fill = 0;               // feature-dropout's value, token-masking's mask id
  std::int64_t vocabulary = 0;  // token-replacement on id inputs: ids in [0, vocabulary); 0: swap slices
  bool hotspots = true;         // also perturb each feature / token alone (at the largest intensity)
  std::uint64_t seed = 0;
  std::int64_t max_batch = 1000;
};

struct PerturbationPoint {
  double intensity = 0;
  double accuracy = 0;    // perturbed predictions equal to the labels (or clean predictions)
  double agreement = 0;   // perturbed predictions equal to the clean predictions
  double flip_rate = 0;   // 1 - agreement
  double confidence = 0;  // mean softmax probability of the reference class
};

struct Hotspot {
  std::int64_t unit = 0;  // feature (flat element) or token index
  double flip_rate = 0;   // of the inputs x samples perturbed at that unit alone
};

struct FailureMode {
  std::int64_t from = 0, to = 0;  // reference class -> predicted class
  std::int64_t count = 0;         // over all intensities and samples
};

struct PerturbationReport {
  Perturbation kind = Perturbation::gaussian;
  std::vector<PerturbationPoint> points;  // one per intensity, in the order given
  double clean_accuracy = 0;
  // Normalised areas (trapezoid rule) over [min, max] intensity: `score` of agreement, 1 when no
  // perturbation changes any prediction; `accuracy_score` of accuracy divided by clean accuracy.
  double score = 0, accuracy_score = 0;
  std::vector<Hotspot> hotspots;           // most flips first; units that never flip included
  std::vector<FailureMode> failure_modes;  // most frequent first
  bool tokens = false;                     // hotspots are tokens, not features
  std::int64_t evaluations = 0;
};

// rows: n examples, row-major; labels: n classes, or empty to measure against the clean
// predictions. tfdebug::Error for malformed rows, labels or intensities.
PerturbationReport perturbation_test(interpret::ForwardModel& model, std::span<const float> rows,
                                     std::span<const std::int64_t> labels,
                                     const PerturbationOptions& options = {});

// The normalised trapezoid area of y over x (x increasing): the mean of y over [x0, xn]; y[0]
// when there is one point.
double normalized_area(std::span<const double> x, std::span<const double> y);

}  // namespace tfdebug::robust
