// Edge-case discovery (docs/robustness.md, "Edge cases"): of a set of inputs, those a classifier
// is likely to get wrong — low margin between its top two outputs, a large input-gradient norm
// of that margin (a small step changes the answer), far from the training data by Mahalanobis
// distance — ranked, each with the measured reasons; and neuron coverage of a layer.
//
//   tfdebug::robust::EdgeCaseOptions o;
//   o.training = training_rows;  // fits the Mahalanobis covariance
//   const auto r = tfdebug::robust::find_edge_cases(model, rows, labels, o);
//   for (const auto& c : r.risky) std::printf("#%lld: %s\n", (long long)c.index, c.reasons[0].c_str());
//
// A "layer" is any ForwardModel from the input to a layer's units (for LibTorch, a TorchModel of
// the network's first part); without one, the Mahalanobis distance is taken on the inputs.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "tfdebug/interpret/model.hpp"

namespace tfdebug::robust {

// A Gaussian fitted to rows of d values: mean and the shrunk covariance
// S = (1 - shrinkage) C + shrinkage (trace(C) / d) I, C the sample covariance (divisor n - 1);
// distance(v) = sqrt((v - mean)^T S^-1 (v - mean)). tfdebug::Error when fewer than 2 rows or S is
// singular (shrinkage > 0 prevents that unless every row is the same).
class Mahalanobis {
 public:
  Mahalanobis(std::span<const float> rows, std::int64_t d, double shrinkage);
  double distance(std::span<const float> v) const;
  const std::vector<double>& mean() const { return mean_; }

 private:
  std::int64_t d_;
  std::vector<double> mean_;
  std::vector<double> cholesky_;  // lower-triangular L with S = L L^T, row-major
};

// Fraction of a layer's units whose activation exceeds `threshold` on at least one of the rows
// (DeepXplore's neuron coverage, without its per-layer scaling).
struct Coverage {
  std::int64_t covered = 0, units = 0;
  double fraction() const {
    return units > 0 ? static_cast<double>(covered) / static_cast<double>(units) : 0;
  }
};
Coverage neuron_coverage(interpret::ForwardModel& layer, std::span<const float> rows, double threshold,
                         std::int64_t max_batch = 1000);

struct EdgeCaseOptions {
  std::span<const float> training;           // rows for the Mahalanobis fit; empty: no OOD check
  interpret::ForwardModel* layer = nullptr;  // where distances and coverage are taken; null: inputs
  double shrinkage = 0.01;
  double ood_quantile = 0.99;  // out of distribution: beyond this quantile of the training rows' distances
  double coverage_threshold = 0;
  double fraction = 0.1;  // low margin / high gradient: the worst this fraction of the inputs
  bool gradients = true;  // when the model is a GradientModel
  std::int64_t max_batch = 1000;
};

struct RiskyCase {
  std::int64_t index = 0;
  std::int64_t flags = 0;            // reasons found
  std::vector<std::string> reasons;  // each with its measured number
};

struct EdgeCaseReport {
  std::vector<std::int64_t> predicted;
  std::vector<double> margins;              // top output minus the second, per input
  std::vector<double> gradient_norms;       // L2 norm of the margin's input gradient; empty without [G]
  std::vector<double> mahalanobis;          // per input; empty without training rows
  double ood_threshold = 0;                 // the training rows' ood_quantile distance
  std::string distance_space;               // "inputs" or "layer"
  std::optional<Coverage> coverage;         // with a layer only
  double margin_cut = 0, gradient_cut = 0;  // the `fraction` cut points
  std::vector<RiskyCase> risky;             // most flags first, then smallest margin
};

EdgeCaseReport find_edge_cases(interpret::ForwardModel& model, std::span<const float> rows,
                               std::span<const std::int64_t> labels, const EdgeCaseOptions& options = {});

}  // namespace tfdebug::robust
