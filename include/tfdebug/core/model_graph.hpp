// ModelGraph: what a model file says about its computation graph, for formats that have one
// (ONNX). Only the facts as written in the file: no shape inference, no checking that the graph
// is valid.
//
//   const tfdebug::io::ModelFile model = tfdebug::io::ModelFile::open("model.onnx");
//   if (const tfdebug::ModelGraph* g = model.graph()) {
//     for (const tfdebug::GraphNode& node : g->nodes)
//       std::cout << node.op_type << " " << node.name << "\n";
//   }
//
// `nodes`, `inputs`, `outputs` and `value_info` are those of the main graph; nodes of subgraphs
// (If branches, Loop and Scan bodies) are counted in `subgraph_nodes` but not listed.
//
// The same type describes a graph traced from a LibTorch forward pass
// (tfdebug::torch::trace_graph): nodes are aten ops ("aten::linear") in domain "aten", each with
// its module path and its non-tensor arguments; parameters and buffers are `initializers`.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace tfdebug {

struct OpsetImport {
  std::string domain;  // "" is the default ONNX domain (ai.onnx)
  std::int64_t version = 0;
};

// A non-tensor argument of a traced op, named as in the op's schema ("dim", "eps").
struct GraphAttribute {
  std::string name;
  std::variant<std::int64_t, double, std::string, std::vector<std::int64_t>, std::vector<double>> value;
};

struct GraphNode {
  std::string name;
  std::string op_type;
  std::string domain;
  std::vector<std::string> inputs;  // "" marks an omitted optional input, as in the file
  std::vector<std::string> outputs;
  // The module the node belongs to, "blocks.0.attn" ("" at the top). Traced graphs set it; ONNX
  // graphs leave it empty (the exporter's scopes are in the node name: module_of_node()).
  std::string module;
  std::vector<GraphAttribute> attributes;  // traced graphs only
  // ONNX graphs: the node's AttributeProto messages, serialized as in the file (for writing the
  // graph back out: tfdebug::write_onnx_model).
  std::vector<std::string> onnx_attributes;
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
  // The weights: ONNX initializers of the main graph; traced parameters and buffers.
  std::vector<GraphValue> initializers;
  std::int64_t subgraph_nodes = 0;  // nodes inside subgraphs, at any depth
};

// "f32[2,8,32]": a value's ONNX element type as tfdebug's dtype name ("?" when not given), and
// its shape when known (a symbolic dimension by its name, an unknown one as "?").
std::string graph_value_text(const GraphValue& value);

// A node's module path: `module` when set, else the scopes of an ONNX node name written by
// PyTorch's exporter ("/blocks.0/attn/MatMul" -> "blocks.0.attn").
inline std::string module_of_node(const GraphNode& node) {
  if (!node.module.empty()) return node.module;
  std::string path;
  const std::string& name = node.name;
  std::size_t start = name.starts_with("/") ? 1 : 0;
  for (std::size_t slash = name.find('/', start); slash != std::string::npos; slash = name.find('/', start)) {
    if (slash > start) path.append(path.empty() ? "" : ".").append(name, start, slash - start);
    start = slash + 1;
  }
  return path;
}

}  // namespace tfdebug
