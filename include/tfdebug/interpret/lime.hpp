// LIME for tabular data ([F], tfdebug/interpret/model.hpp; Ribeiro et al. 2016, after the
// upstream `lime` package's LimeTabularExplainer): samples around x, weighted by closeness, and a
// weighted ridge regression on interpretable features whose coefficients are the explanation.
//
//   tfdebug::interpret::LimeOptions o;
//   o.training = rows;   // the training data (row-major), for the quartiles and the scale
//   o.seed = 7;          // the same seed gives the same explanation, bit for bit
//   const auto e = tfdebug::interpret::lime_tabular(model, x, /*target=*/1, o);
//   // e.values: one coefficient per feature; e.intercept, e.r2, e.local_prediction
//
// Defaults are upstream's: 5,000 samples; quartile discretisation (each feature's bins at the
// training data's 25th, 50th and 75th percentiles; a sample draws each feature's bin from the
// training bins' frequencies, its interpretable value is 1 when that is x's bin, its model input
// a truncated normal of the training values in the bin); the kernel exp(-d^2 / (2 w^2)) with
// w = 0.75 sqrt(M) on the interpretable distance to x; Ridge(alpha = 1) with an intercept,
// fitted with the kernel weights, and its weighted R^2. Without discretisation a feature is drawn
// as N(0, 1) * its training std + its training mean, and its interpretable value is that
// standardised. Every feature is used (upstream's forward selection over at most 10 features keeps all of
// them for M <= 10). The first sample is x itself. LIME's own work runs beside the model on a
// second thread (LimeOptions::pipeline). The quartile bins are made once per training set: each
// thread keeps those of the last training data it saw and reuses them while the same values come
// again (compared bit for bit), as upstream's explainer makes them once in its constructor.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "tfdebug/interpret/attribution.hpp"
#include "tfdebug/interpret/model.hpp"

namespace tfdebug::interpret {

struct LimeOptions {
  std::vector<float> training;  // rows of the training data (row-major, each one example); required
  std::int64_t samples = 5000;
  bool discretize = true;   // quartile bins (upstream's discretize_continuous=True)
  double kernel_width = 0;  // 0: 0.75 * sqrt(features)
  double alpha = 1;         // the ridge penalty
  std::uint64_t seed = 0;
  std::int64_t max_batch = 256;
  // A second thread draws the next batch's samples while the model evaluates this batch, and
  // the surrogate's products of the rows while it evaluates the last (only with more than one
  // batch, and where the machine has more than one hardware thread); the model is still called
  // from the calling thread only, and the explanation is the same bit for bit. false: all on the
  // calling thread. On by default: on a 2-core machine it took LIME from 1.23x to 1.08x of the
  // model's own time with a core free, and cost nothing measurable with both cores busy
  // (docs/performance.md, interpretability).
  bool pipeline = true;
  bool keep_neighbourhood = false;  // fill LimeAttribution's data, weights and outputs
};

struct LimeAttribution : Attribution {
  double intercept = 0;         // of the surrogate
  double r2 = 0;                // its weighted R^2 on the samples (upstream's `score`)
  double local_prediction = 0;  // the surrogate at x
  // keep_neighbourhood: the interpretable data (samples x features), the kernel weights and the
  // model's target output of each sample, as the surrogate was fitted to them.
  std::vector<double> data, weights, outputs;
};

LimeAttribution lime_tabular(ForwardModel& model, std::span<const float> x, std::int64_t target,
                             const LimeOptions& options);

}  // namespace tfdebug::interpret
