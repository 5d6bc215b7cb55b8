// The computation graph of one LibTorch forward pass, as the same ModelGraph that the ONNX
// reader produces, so that every graph output of tfdebug (DOT, SVG, JSON, ONNX for Netron,
// TensorBoard's graph dashboard) works for both.
//
//   MyModel model;
//   const tfdebug::ModelGraph graph =
//       tfdebug::torch::trace_graph(*model, [&] { model->forward(batch); });
//   for (const auto& node : graph.nodes)
//     std::cout << node.module << " " << node.op_type << "\n";   // "blocks.0.attn aten::linear"
//
// What the graph holds (docs/graph.md):
//   nodes        the aten ops the forward called directly (ops that run inside another op, such
//                as the addmm inside aten::linear, are part of it and not listed), in call order;
//                op_type is the op's name ("aten::linear"), domain "aten", name
//                "blocks.0/attn/aten::linear_3" (module scopes, op, a per-op counter), module the
//                module path and attributes the op's non-tensor arguments named as in its schema.
//   edges        by tensor identity: an input is the output of the last op that returned the
//                same tensor (TensorImpl), or the same memory (storage, offset, shape, strides).
//                Output k of node N is the value "N" (k = 0) or "N:k", as in TensorFlow.
//   initializers the module's parameters and buffers the forward read, named as in
//                named_parameters() / named_buffers().
//   inputs       every other tensor an op read that no op of the forward produced (the batch,
//                tensors the model keeps outside its buffers), "input.0", "input.1", ...
//   outputs      the values no later op read.
//   value_info   dtype (ONNX TensorProto ids) and shape of every value.
// Module of an op: the module of a parameter it reads; else the innermost RECORD_USER_SCOPE of
// the forward; else the parent of the module of the last op that read a parameter (the ops
// between two layers belong to the module that holds them: the view after `attn.q` runs in
// `attn`).
//
// The forward runs once, on the calling thread, with a thread-local RecordFunction callback;
// ops on other threads are not seen. Throws tfdebug::Error when `forward` throws (its message
// included) or when the callback could not record an op.
#pragma once

#include <functional>

#include "tfdebug/core/model_graph.hpp"

namespace torch::nn {
class Module;
}  // namespace torch::nn

namespace tfdebug::torch {

[[nodiscard]] ModelGraph trace_graph(::torch::nn::Module& module, const std::function<void()>& forward);

}  // namespace tfdebug::torch
