// The backward node the autograd engine is evaluating on this thread (Note [Current node]).
//
// Note [Current node]
// The backward node an op runs in gives the op its module. A RecordFunction callback on the
// BACKWARD_FUNCTION scope could track the nodes, but it makes every node build its name and a
// RecordFunction with its callbacks: 2.2% of the demo step (measured against the same adapter
// without it), more than the rest of the interception. The engine already keeps the node it is
// evaluating, in a thread-local that Node::assign_parent (exported) hands to the node's
// AnomalyMetadata::assign_parent (virtual). So each thread owns a probe node whose metadata is
// its own AnomalyMetadata subclass: probe.assign_parent() reports the current node, at the price
// of two calls, without a callback and without any change to the user's graph.
#pragma once

#include <torch/csrc/autograd/function.h>

namespace tfdebug::torch::detail {

// The node this thread's autograd engine is evaluating; nullptr outside backward.
const ::torch::autograd::Node* current_node();

}  // namespace tfdebug::torch::detail
