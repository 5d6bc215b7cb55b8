// `tfdebug graph`'s renderings of a ModelGraph (an ONNX file's or a traced LibTorch forward):
// GraphViz DOT and JSON (docs/graph.md).
#pragma once

#include <string>

#include "nlohmann/json.hpp"
#include "tfdebug/core/model_graph.hpp"

namespace tfdebug::cli {

struct DotOptions {
  // Modules nested deeper than this are drawn as one node each (a module at depth `depth` + 1,
  // with all it holds); -1: no limit. 0 draws each top-level module as one node.
  int depth = -1;
  // Sibling modules "X.0" .. "X.N-1" whose subgraphs have the same structure (the same ops in
  // the same order, wired the same way) are drawn once, labelled "×N".
  bool collapse_repeats = true;
};

std::string graph_dot(const ModelGraph& graph, const DotOptions& options);
nlohmann::json graph_json(const ModelGraph& graph);

// "f32[2,8,32]": a value's ONNX element type as tfdebug's dtype name, and its shape.
inline std::string value_text(const GraphValue& value) {
  return graph_value_text(value);
}

}  // namespace tfdebug::cli
