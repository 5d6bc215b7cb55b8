// Backward frames of the profiler's trace carry the module of their op, as forward frames do
// (Note [Module of an op] in src/torch/module_attribution.hpp): in the trace that the flame graph
// draws, each autograd node the engine evaluates nests in the zone of the module whose forward op
// made it. Checked on the demo transformer and on the zoo's CNN (convolutions, batch norm).
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "demo_model.hpp"
#include "tfdebug/profile/trace.hpp"
#include "tfdebug/torch/profiler.hpp"
#include "zoo.hpp"

namespace tfdebug::torch {
namespace {

constexpr std::string_view kNode = "autograd::engine::evaluate_function: ";

// Backward node kind ("AddmmBackward0") -> the modules whose zone it ran in ("" for none), over
// the trace's backward phases.
using NodeModules = std::map<std::string, std::set<std::string>>;

NodeModules backward_nodes(const profile::Trace& trace) {
  NodeModules out;
  for (const profile::ThreadTrace& thread : trace.threads) {
    const std::vector<profile::Slice> all = profile::slices(thread);
    for (const profile::Slice& slice : all) {
      const std::string& name = trace.names[slice.name];
      if (!name.starts_with(kNode) || slice.parent < 0) continue;
      // The node's parent is its module's zone, or the phase itself when it has no module.
      const std::string& parent = trace.names[all[static_cast<std::size_t>(slice.parent)].name];
      std::string module = parent == "backward" ? "" : parent;
      // Only nodes of the backward phase (not nodes nested in other nodes).
      std::int32_t up = slice.parent;
      bool in_backward = false;
      while (up >= 0) {
        const std::string& ancestor = trace.names[all[static_cast<std::size_t>(up)].name];
        if (ancestor == "backward") in_backward = true;
        if (ancestor.starts_with(kNode)) break;
        up = all[static_cast<std::size_t>(up)].parent;
      }
      if (!in_backward || up >= 0) continue;
      out[name.substr(kNode.size())].insert(module);
    }
  }
  return out;
}

std::string describe(const NodeModules& nodes) {
  std::string text;
  for (const auto& [node, modules] : nodes) {
    text += node + ":";
    for (const auto& m : modules) text += " '" + m + "'";
    text += "\n";
  }
  return text;
}

TEST(ProfilerBackward, DemoTransformerNodesRunInTheirModules) {
  demo::DemoConfig config;
  demo::DemoTrainer trainer(config);
  trainer.train_step();  // warm-up
  Profiler profiler(trainer.model());
  for (std::int64_t step = 1; step <= 2; ++step) {
    profiler.step_begin(step);
    trainer.train_step();
    profiler.step_end(step);
  }
  const NodeModules nodes = backward_nodes(profiler.stop().trace);
  ASSERT_FALSE(nodes.empty());
  // Linear layers: their matrix products' nodes run in the layer (and only there).
  std::set<std::string> linear;
  for (const char* block : {"blocks.0", "blocks.1"}) {
    for (const char* layer : {".attn.q", ".attn.k", ".attn.v", ".attn.o", ".mlp.fc1", ".mlp.fc2"})
      linear.insert(std::string(block) + layer);
  }
  linear.insert("head");
  std::set<std::string> linear_seen;
  for (const auto& [node, modules] : nodes) {
    for (const auto& m : modules)
      if (linear.contains(m)) linear_seen.insert(m);
  }
  EXPECT_EQ(linear_seen, linear) << describe(nodes);
  // The attention's own softmax, the layer norms, the embeddings: in their modules.
  ASSERT_TRUE(nodes.contains("SoftmaxBackward0")) << describe(nodes);
  EXPECT_EQ(nodes.at("SoftmaxBackward0"), (std::set<std::string>{"blocks.0.attn", "blocks.1.attn"}));
  ASSERT_TRUE(nodes.contains("NativeLayerNormBackward0")) << describe(nodes);
  EXPECT_EQ(nodes.at("NativeLayerNormBackward0"),
            (std::set<std::string>{"blocks.0.ln1", "blocks.0.ln2", "blocks.1.ln1", "blocks.1.ln2", "ln_f"}));
  ASSERT_TRUE(nodes.contains("EmbeddingBackward0")) << describe(nodes);
  EXPECT_EQ(nodes.at("EmbeddingBackward0"), (std::set<std::string>{"pos", "tok"}));
  ASSERT_TRUE(nodes.contains("MmBackward0")) << describe(nodes);
  EXPECT_EQ(nodes.at("MmBackward0"), linear) << describe(nodes);
  ASSERT_TRUE(nodes.contains("ReluBackward0")) << describe(nodes);
  EXPECT_EQ(nodes.at("ReluBackward0"), (std::set<std::string>{"blocks.0.mlp", "blocks.1.mlp"}));
  // Without a module: the nodes of the model's top-level code (tok + pos, the logits reshaped and
  // copied for the loss), of the loss, and AccumulateGrad, which no forward op makes.
  std::set<std::string> without_module;
  for (const auto& [node, modules] : nodes)
    if (modules.contains("")) without_module.insert(node);
  EXPECT_EQ(without_module, (std::set<std::string>{"AddBackward0", "CloneBackward0", "LogSoftmaxBackward0",
                                                   "NllLossBackward0", "UnsafeViewBackward0",
                                                   "torch::autograd::AccumulateGrad"}))
      << describe(nodes);
}

TEST(ProfilerBackward, ZooCnnNodesRunInTheirModules) {
  demo::ZooConfig config;
  config.model = demo::ZooModel::cnn;
  demo::ZooTrainer trainer(config);
  trainer.train_step(0);  // warm-up
  Profiler profiler(trainer.model());
  for (std::int64_t step = 1; step <= 2; ++step) {
    profiler.step_begin(step);
    trainer.train_step(step);
    profiler.step_end(step);
  }
  const NodeModules nodes = backward_nodes(profiler.stop().trace);
  ASSERT_TRUE(nodes.contains("ConvolutionBackward0")) << describe(nodes);
  EXPECT_EQ(nodes.at("ConvolutionBackward0"), (std::set<std::string>{"conv1", "conv2"}));
  ASSERT_TRUE(nodes.contains("NativeBatchNormBackward0")) << describe(nodes);
  EXPECT_EQ(nodes.at("NativeBatchNormBackward0"), (std::set<std::string>{"bn1", "bn2"}));
  ASSERT_TRUE(nodes.contains("AddmmBackward0")) << describe(nodes);
  EXPECT_EQ(nodes.at("AddmmBackward0"), (std::set<std::string>{"fc"}));
}

}  // namespace
}  // namespace tfdebug::torch
