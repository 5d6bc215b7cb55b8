// ModelGraph: what a model file says about its computation graph, for formats that have one
// (ONNX). Only the facts as written in the file: no shape inference, no checking that the graph
// is valid.
//
//   const tfdebug::io::ModelFile model = tfdebug::io::ModelFile::open("model.onnx");
//   if (const tfdebug::io::ModelGraph* g = model.graph()) {
//     for (const tfdebug::io::GraphNode& node : g->nodes)
//       std::cout << node.op_type << " " << node.name << "\n";
//   }
//
// `nodes`, `inputs`, `outputs` and `value_info` are those of the main graph; nodes of subgraphs
// (If branches, Loop and Scan bodies) are counted in `subgraph_nodes` but not listed.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace tfdebug::io {

struct OpsetImport {
  std::string domain;  // "" is the default ONNX domain (ai.onnx)
  std::int64_t version = 0;
};

struct GraphNode {
  std::string name;
  std::string op_type;
  std::string domain;
  std::vector<std::string> inputs;  // "" marks an omitted optional input, as in the file
  std::vector<std::string> outputs;
};

// A dimension is a number, a symbolic name ("batch"), or unknown (std::monostate).
using GraphDim = std::variant<std::monostate, std::int64_t, std::string>;

struct GraphValue {
  std::string name;
  // The ONNX TensorProto.DataType id (1 FLOAT, 7 INT64, 10 FLOAT16, ...); 0 when the value is
  // not a tensor (a sequence, a map) or the type is not given.
  int elem_type = 0;
  bool has_shape = false;  // false: rank unknown; true: `dims` lists every dimension
  std::vector<GraphDim> dims;
};

struct ModelGraph {
  std::int64_t ir_version = 0;
  std::string producer_name;
  std::string producer_version;
  std::vector<OpsetImport> opsets;
  std::string name;  // the main graph's name
  std::vector<GraphNode> nodes;
  std::vector<GraphValue> inputs;
  std::vector<GraphValue> outputs;
  std::vector<GraphValue> value_info;
  std::int64_t subgraph_nodes = 0;  // nodes inside subgraphs, at any depth
};

}  // namespace tfdebug::io
