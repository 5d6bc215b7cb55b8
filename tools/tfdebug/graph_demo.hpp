// The demo transformer's graph for `tfdebug graph --demo` (graph_demo.cpp, built with LibTorch
// only): one forward pass traced by tfdebug::torch::trace_graph, and the token embedding matrix
// for TensorBoard's projector.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tfdebug/core/model_graph.hpp"

namespace tfdebug::cli {

struct DemoGraph {
  ModelGraph graph;
  std::vector<float> token_embedding;  // [vocab, d_model], row-major
  std::int64_t vocab = 0;
  std::int64_t d_model = 0;
  std::vector<std::string> token_labels;  // "0 (separator)", "1", ...
};

// Trains the demo model `steps` steps (0: as initialised), then traces one forward pass.
DemoGraph demo_graph(std::int64_t steps);

}  // namespace tfdebug::cli
