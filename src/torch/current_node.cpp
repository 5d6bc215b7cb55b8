#include "current_node.hpp"

#include <torch/csrc/autograd/anomaly_mode.h>

#include <memory>

namespace tfdebug::torch::detail {

namespace {

// Note [Current node]: a node that never runs; its metadata catches the node being evaluated.
class NodeProbe final : public ::torch::autograd::Node {
 public:
  NodeProbe() : Node(/*sequence_nr=*/UINT64_MAX) {
    auto metadata = std::make_unique<Catch>();
    catch_ = metadata.get();
    anomaly_metadata_ = std::move(metadata);
  }
  ::torch::autograd::variable_list apply(::torch::autograd::variable_list&& /*inputs*/) override {
    return {};
  }

  // The node this thread's autograd engine is evaluating; nullptr outside backward.
  const ::torch::autograd::Node* current() {
    catch_->parent = nullptr;
    assign_parent();
    return catch_->parent;
  }

 private:
  struct Catch final : ::torch::autograd::AnomalyMetadata {
    void assign_parent(const std::shared_ptr<::torch::autograd::Node>& node) override { parent = node.get(); }
    const ::torch::autograd::Node* parent = nullptr;
  };
  Catch* catch_ = nullptr;
};

}  // namespace

const ::torch::autograd::Node* current_node() {
  thread_local NodeProbe probe;
  return probe.current();
}

}  // namespace tfdebug::torch::detail
