// A model graph as an ONNX ModelProto, for Netron and any ONNX tool that reads structure: the
// graph of a LibTorch forward pass (tfdebug::torch::trace_graph) or of an ONNX file (a round
// trip).
//
//   const tfdebug::ModelGraph graph = tfdebug::torch::trace_graph(model, forward);
//   tfdebug::write_onnx_model(graph, "model.onnx");   // open in Netron
//
// What is written (docs/graph.md):
//   - IR version 8, opset 17 of the default domain, plus opset 1 of "ai.tfdebug.aten" for traced
//     ops with no ONNX equivalent (arange, gelu, ...): they keep their aten name and their
//     arguments as attributes.
//   - Traced aten ops that have an exact ONNX equivalent become that op: linear -> Gemm (2-D) or
//     Transpose + MatMul + Add, matmul/mm/bmm -> MatMul, addmm -> Gemm, add/sub/mul/div ->
//     Add/Sub/Mul/Div, in place or not (a scalar operand becomes a Constant), softmax -> Softmax, layer_norm
//     -> LayerNormalization, embedding -> Gather, transpose/t/permute -> Transpose, view/reshape -> Reshape,
//     cat -> Concat, relu/tanh/sigmoid/exp/log/sqrt/neg/abs/erf -> their op, contiguous/clone/detach and
//     eval-mode dropout -> Identity.
//   - Weights carry shapes only: they are graph inputs with dtype and shape, not initializers
//     with data (the file is a picture of the structure, small whatever the model's size).
//   - value_info gives the dtype and shape of every value the graph records.
// An ONNX graph's own nodes are written back with their attributes as read (subgraphs
// included), its opsets and its IR version; its initializers too become inputs with shapes.
#pragma once

#include <string>

#include "tfdebug/core/model_graph.hpp"

namespace tfdebug {

// The serialized ModelProto.
std::string onnx_model_bytes(const ModelGraph& graph);
// Writes onnx_model_bytes to `path`; throws tfdebug::Error naming the path when it cannot.
void write_onnx_model(const ModelGraph& graph, const std::string& path);

}  // namespace tfdebug
