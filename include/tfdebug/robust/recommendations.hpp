// Recommendations written from measurements (docs/robustness.md): each sentence states the
// numbers it rests on — a flip rate at an intensity, a certified radius at a sigma, the features
// that flip predictions alone, the inputs near the boundary or far from the training data — and
// what to do about them. Nothing is said that was not measured.
//
//   tfdebug::robust::Measurements m;
//   m.perturbations.push_back(perturbation_test(model, rows, labels, o));
//   for (const auto& r : tfdebug::robust::recommend(m)) std::puts(r.text.c_str());
//
// Numbers are printed with format_measure (%.3g) and fractions as percentages of it; each
// Recommendation also carries them, by name, as measured.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tfdebug/robust/edge_cases.hpp"
#include "tfdebug/robust/perturbation.hpp"
#include "tfdebug/robust/what_if.hpp"

namespace tfdebug::robust {

// Randomized smoothing over a set of inputs, summarised.
struct CertificationSummary {
  double sigma = 0;
  std::int64_t inputs = 0;
  double abstain_rate = 0;        // fraction of inputs abstained on
  double certified_accuracy = 0;  // fraction certified with the right class (any radius)
  double median_radius = 0;       // over the inputs (0 for abstentions)
};

struct Measurements {
  std::optional<CertificationSummary> certification;
  std::vector<PerturbationReport> perturbations;
  std::vector<FeatureSweep> sweeps;
  std::optional<EdgeCaseReport> edge_cases;
  std::vector<std::string> feature_names;  // optional, for the text
};

struct Recommendation {
  std::string topic;  // "certified", "perturbation", "hotspot", "what-if", "edge-cases"
  std::string text;
  std::vector<std::pair<std::string, double>> numbers;  // as measured, in the order of the text
};

std::vector<Recommendation> recommend(const Measurements& m);

// "%.3g" of v: how numbers appear in the text.
std::string format_measure(double v);

}  // namespace tfdebug::robust
