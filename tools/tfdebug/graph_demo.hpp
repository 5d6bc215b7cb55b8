// The demo transformer's graph for `tfdebug graph --demo` (graph_demo.cpp, built with LibTorch
// only): one forward pass traced by tfdebug::torch::trace_graph, the parameters' values (for
// the ONNX initializers), and the token embedding matrix for TensorBoard's projector.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tfdebug/core/model_graph.hpp"

namespace tfdebug::demo {
class DemoTrainer;
}

namespace tfdebug::cli {

// A parameter's value, copied out of LibTorch as f32, row-major.
struct DemoWeight {
  std::string name;  // as the graph's initializers name it: "blocks.0.attn.q.weight"
  std::vector<std::int64_t> shape;
  std::vector<float> values;
};

struct DemoGraph {
  ModelGraph graph;
  std::vector<DemoWeight> weights;
  std::vector<float> token_embedding;  // [vocab, d_model], row-major
  std::int64_t vocab = 0;
  std::int64_t d_model = 0;
  std::vector<std::string> token_labels;  // "0 (separator)", "1", ...
};

// Trains the demo model `steps` steps (0: as initialised), then traces one forward pass.
DemoGraph demo_graph(std::int64_t steps);

// The graph of `trainer`'s model as it is now: one forward pass traced, with the parameters.
DemoGraph demo_graph(demo::DemoTrainer& trainer);

// `graph` as an ONNX model with its weights (Netron shows the values), for a run directory:
// `tfdebug demo --out DIR` writes DIR/model.onnx, which the run's HTML report draws.
void write_demo_graph(const DemoGraph& graph, const std::string& path);

}  // namespace tfdebug::cli
