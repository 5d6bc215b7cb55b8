// Classifier helpers shared by robust's methods: argmax, softmax of one class, checks of labels,
// and the clean predictions of a set of rows through a Batcher (Note [Bounded batches]).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "interpret/batching.hpp"
#include "tfdebug/core/error.hpp"

namespace tfdebug::robust {

inline std::int64_t argmax(std::span<const float> v) {
  return static_cast<std::int64_t>(std::max_element(v.begin(), v.end()) - v.begin());
}

// softmax(v)[k], computed from the maximum so that large logits do not overflow.
inline double softmax_at(std::span<const float> v, std::int64_t k) {
  const double top = *std::max_element(v.begin(), v.end());
  double sum = 0;
  for (const float x : v) sum += std::exp(static_cast<double>(x) - top);
  return std::exp(static_cast<double>(v[static_cast<std::size_t>(k)]) - top) / sum;
}

// The number of classes; tfdebug::Error unless the model has at least two outputs and the
// labels (when given) are n classes of it.
inline std::int64_t check_classifier(const interpret::ForwardModel& model,
                                     std::span<const std::int64_t> labels, std::int64_t n) {
  const std::int64_t classes = model.output_size();
  if (classes < 2)
    throw Error("robustness tests need a classifier: the model has " + std::to_string(classes) +
                " output, expected one per class (at least 2)");
  if (labels.empty()) return classes;
  if (static_cast<std::int64_t>(labels.size()) != n) {
    throw Error("the labels are " + std::to_string(labels.size()) + " for " + std::to_string(n) +
                " inputs: expected one class per input");
  }
  for (std::size_t i = 0; i < labels.size(); ++i) {
    if (labels[i] < 0 || labels[i] >= classes) {
      throw Error("label " + std::to_string(labels[i]) + " of input " + std::to_string(i) +
                  " is not a class of the model (0.." + std::to_string(classes - 1) + ")");
    }
  }
  return classes;
}

struct ClassOutputs {
  std::vector<std::int64_t> predicted;  // argmax per row
  std::vector<float> outputs;           // rows x classes
};

inline ClassOutputs classify(interpret::detail::Batcher& batcher, std::span<const float> rows,
                             std::int64_t n) {
  const std::int64_t numel = batcher.numel();
  ClassOutputs c;
  c.predicted.resize(static_cast<std::size_t>(n));
  batcher.forward(
      n,
      [&](std::int64_t i, std::span<float> point) {
        const auto from = rows.begin() + i * numel;
        std::copy(from, from + numel, point.begin());
      },
      [&](std::int64_t i, std::span<const float> out) {
        c.predicted[static_cast<std::size_t>(i)] = argmax(out);
        c.outputs.insert(c.outputs.end(), out.begin(), out.end());
      });
  return c;
}

}  // namespace tfdebug::robust
