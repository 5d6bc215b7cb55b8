// tfdebug explain --method dice|wachter: counterfactuals of one input, printed as a table of the
// features that change and the set's metrics, or as JSON (docs/interpretability.md).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "tfdebug/interpret/model.hpp"

#include "analysis_output.hpp"

namespace tfdebug::cli {

struct CounterfactualRequest {
  std::string method;  // "dice" or "wachter"
  std::string model;   // the model's path, for the text
  std::span<const float> x;
  std::span<const float> outputs;  // the model's outputs at x
  std::vector<float> training;     // rows for the MADs (--background); may be empty
  std::int64_t count = 4;
  std::int64_t wanted_class = -1;  // -1: the runner-up at x (one output: the other class)
  std::string immutable;           // "i,j"
  std::string categorical;         // dice: "i,j"
  std::uint64_t seed = 0;
  std::vector<std::string> names;  // of the features, when known
  AnalysisOutput output;           // --json, --run-dir, --html
};

// Prints the counterfactuals; returns the exit status.
int print_counterfactuals(interpret::GradientModel& model, const CounterfactualRequest& request);

}  // namespace tfdebug::cli
