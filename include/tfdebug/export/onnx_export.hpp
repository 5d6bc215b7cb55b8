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
//   - Weights with values (OnnxWriteOptions::weights) are initializers with their data (raw_data,
//     little-endian), so Netron shows them; weights without values, of a dtype ONNX IR 8 lacks
//     (fp8), whose values disagree with the graph's dtype or shape, or past
//     `max_weight_bytes` in all, are graph inputs with dtype and shape only. The cap keeps the
//     file inside protobuf's 2 GiB limit (no external data files); writing holds about three
//     copies of the written weights in memory.
//   - value_info gives the dtype and shape of every value the graph records.
// An ONNX graph's own nodes are written back with their attributes as read (subgraphs
// included), its opsets and its IR version; its initializers keep their values when the
// options give them (the file's own tensors: tfdebug::io::ModelFile), else become shaped inputs.
//
//   const tfdebug::io::ModelFile file = tfdebug::io::ModelFile::open("model.onnx");
//   tfdebug::OnnxWriteOptions options;
//   options.weights = [&](const std::string& name) -> std::optional<tfdebug::TensorView> { ... };
//   tfdebug::write_onnx_model(*file.graph(), "copy.onnx", options);
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "tfdebug/core/model_graph.hpp"
#include "tfdebug/core/tensor_view.hpp"

namespace tfdebug {

struct OnnxWriteOptions {
  // The value of the initializer `name`, or nullopt; unset: shapes only. The views must stay
  // valid until the call returns.
  std::function<std::optional<TensorView>(const std::string& name)> weights;
  // Weights are written in the graph's order while their bytes, in all, stay within this.
  std::uint64_t max_weight_bytes = std::uint64_t{512} << 20;
};

// What was written of the graph's initializers.
struct OnnxWriteStats {
  std::int64_t weights_written = 0;     // initializers with their data
  std::int64_t weight_bytes = 0;        // their raw bytes
  std::int64_t weights_shape_only = 0;  // no value, a dtype or shape that disagrees, or fp8
  std::int64_t weights_over_cap = 0;    // left as inputs by max_weight_bytes
};

// The serialized ModelProto.
std::string onnx_model_bytes(const ModelGraph& graph, const OnnxWriteOptions& options = {},
                             OnnxWriteStats* stats = nullptr);
// Writes onnx_model_bytes to `path`; throws tfdebug::Error naming the path when it cannot.
void write_onnx_model(const ModelGraph& graph, const std::string& path, const OnnxWriteOptions& options = {},
                      OnnxWriteStats* stats = nullptr);

}  // namespace tfdebug
