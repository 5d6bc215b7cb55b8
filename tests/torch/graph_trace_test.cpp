// tfdebug::torch::trace_graph on a two-layer MLP (every node, edge and shape known by hand) and on
// the demo transformer (module paths, edges by tensor identity, repeated blocks identical).
#include "tfdebug/torch/graph_trace.hpp"

#include <ATen/record_function.h>
#include <gtest/gtest.h>
#include <torch/nn/module.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "demo_model.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/torch/attach.hpp"

namespace {

using tfdebug::GraphValue;
using tfdebug::ModelGraph;

// Layers that call one aten op each, so that the graph does not depend on how a LibTorch version
// implements torch::nn::Linear (aten::linear, or t + addmm).
struct Layer : ::torch::nn::Module {
  Layer(std::int64_t in, std::int64_t out) : weight(register_parameter("weight", at::ones({in, out}))) {}
  at::Tensor forward(const at::Tensor& x) { return at::matmul(x, weight); }
  at::Tensor weight;
};

struct Mlp : ::torch::nn::Module {
  Mlp()
      : fc1(register_module("fc1", std::make_shared<Layer>(4, 3))),
        fc2(register_module("fc2", std::make_shared<Layer>(3, 2))) {}
  at::Tensor forward(const at::Tensor& x) { return fc2->forward(at::relu(fc1->forward(x))); }
  std::shared_ptr<Layer> fc1, fc2;
};

std::vector<std::int64_t> dims(const GraphValue& v) {
  std::vector<std::int64_t> out;
  for (const auto& d : v.dims) out.push_back(std::get<std::int64_t>(d));
  return out;
}

const GraphValue& value(const ModelGraph& g, const std::string& name) {
  for (const auto* list : {&g.inputs, &g.initializers, &g.value_info}) {
    for (const auto& v : *list) {
      if (v.name == name) return v;
    }
  }
  throw std::runtime_error("no value " + name);
}

TEST(TraceGraph, MlpNodesEdgesAndShapes) {
  Mlp model;
  const at::Tensor x = at::ones({5, 4});
  const ModelGraph g = tfdebug::torch::trace_graph(model, [&] { (void)model.forward(x); });
  ASSERT_EQ(g.nodes.size(), 3U);
  EXPECT_EQ(g.nodes[0].op_type, "aten::matmul");
  EXPECT_EQ(g.nodes[0].domain, "aten");
  EXPECT_EQ(g.nodes[0].name, "fc1/aten::matmul_0");
  EXPECT_EQ(g.nodes[0].module, "fc1");
  EXPECT_EQ(g.nodes[0].inputs, (std::vector<std::string>{"input.0", "fc1.weight"}));
  EXPECT_EQ(g.nodes[0].outputs, (std::vector<std::string>{"fc1/aten::matmul_0"}));
  // relu reads no parameter: it runs in the parent of fc1, the root.
  EXPECT_EQ(g.nodes[1].name, "aten::relu_0");
  EXPECT_EQ(g.nodes[1].module, "");
  EXPECT_EQ(g.nodes[1].inputs, (std::vector<std::string>{"fc1/aten::matmul_0"}));
  EXPECT_EQ(g.nodes[2].name, "fc2/aten::matmul_1");
  EXPECT_EQ(g.nodes[2].inputs, (std::vector<std::string>{"aten::relu_0", "fc2.weight"}));
  ASSERT_EQ(g.inputs.size(), 1U);
  EXPECT_EQ(dims(g.inputs[0]), (std::vector<std::int64_t>{5, 4}));
  EXPECT_EQ(g.inputs[0].elem_type, 1);
  ASSERT_EQ(g.initializers.size(), 2U);
  EXPECT_EQ(g.initializers[0].name, "fc1.weight");
  EXPECT_EQ(dims(g.initializers[0]), (std::vector<std::int64_t>{4, 3}));
  ASSERT_EQ(g.outputs.size(), 1U);
  EXPECT_EQ(g.outputs[0].name, "fc2/aten::matmul_1");
  EXPECT_EQ(dims(g.outputs[0]), (std::vector<std::int64_t>{5, 2}));
  EXPECT_EQ(dims(value(g, "aten::relu_0")), (std::vector<std::int64_t>{5, 3}));
}

TEST(TraceGraph, AttributesInPlaceOpsAndUserScopes) {
  Mlp model;
  const at::Tensor x = at::ones({2, 4});
  const ModelGraph g = tfdebug::torch::trace_graph(model, [&] {
    RECORD_USER_SCOPE("head");
    auto y = at::softmax(x, 1);
    y.mul_(2.0);
    (void)y.transpose(0, 1);
  });
  ASSERT_EQ(g.nodes.size(), 3U);
  EXPECT_EQ(g.nodes[0].op_type, "aten::softmax");
  EXPECT_EQ(g.nodes[0].module, "head");
  ASSERT_FALSE(g.nodes[0].attributes.empty());
  EXPECT_EQ(g.nodes[0].attributes[0].name, "dim");
  EXPECT_EQ(std::get<std::int64_t>(g.nodes[0].attributes[0].value), 1);
  // The in-place mul makes a new value of the same tensor; transpose reads that value.
  EXPECT_EQ(g.nodes[1].op_type, "aten::mul_");
  EXPECT_EQ(g.nodes[1].inputs, (std::vector<std::string>{"head/aten::softmax_0"}));
  EXPECT_EQ(g.nodes[2].inputs, (std::vector<std::string>{"head/aten::mul__0"}));
  EXPECT_EQ(dims(g.outputs.at(0)), (std::vector<std::int64_t>{4, 2}));
}

// tfdebug::torch::Scope names the ops that read no parameter, as it does for the adapter.
TEST(TraceGraph, AdapterScopesNameTheirOps) {
  Mlp model;
  const at::Tensor x = at::ones({2, 4});
  const ModelGraph g = tfdebug::torch::trace_graph(model, [&] {
    tfdebug::torch::Scope scope("post.norm");
    (void)at::softmax(x, 1);
  });
  ASSERT_EQ(g.nodes.size(), 1U);
  EXPECT_EQ(g.nodes[0].module, "post.norm");
  EXPECT_EQ(g.nodes[0].name, "post/norm/aten::softmax_0");
}

TEST(TraceGraph, ForwardThatThrowsIsReported) {
  Mlp model;
  EXPECT_THROW((void)tfdebug::torch::trace_graph(model, [] { throw std::runtime_error("bad batch"); }),
               tfdebug::Error);
  // The callback is gone: a later trace works.
  const at::Tensor x = at::ones({1, 4});
  EXPECT_EQ(tfdebug::torch::trace_graph(model, [&] { (void)model.forward(x); }).nodes.size(), 3U);
}

TEST(TraceGraph, DemoTransformer) {
  tfdebug::demo::DemoConfig config;
  tfdebug::demo::DemoTrainer trainer(config);
  const ModelGraph g = tfdebug::torch::trace_graph(trainer.model(), trainer.forward_pass());
  std::map<std::string, int> ops;
  std::set<std::string> modules;
  std::map<std::string, std::size_t> producer;
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    ++ops[g.nodes[i].op_type];
    modules.insert(g.nodes[i].module);
    for (const auto& out : g.nodes[i].outputs) producer[out] = i;
  }
  // Two embeddings, two layer norms per block and ln_f, one softmax per block. (How a Linear
  // layer shows depends on the LibTorch version: aten::linear, or t + matmul + add_ in 1.13.)
  EXPECT_EQ(ops["aten::embedding"], 2);
  EXPECT_EQ(ops["aten::layer_norm"], 2 * config.layers + 1);
  EXPECT_EQ(ops["aten::softmax"], config.layers);
  // Every layer has ops of its own (they read its parameters, or views of them).
  for (std::int64_t b = 0; b < config.layers; ++b) {
    for (const char* layer : {"attn.q", "attn.k", "attn.v", "attn.o", "mlp.fc1", "mlp.fc2", "ln1", "ln2"}) {
      const std::string m = "blocks." + std::to_string(b) + "." + layer;
      EXPECT_TRUE(modules.contains(m)) << m;
    }
  }
  for (const char* m : {"tok", "pos", "blocks.0.attn", "blocks.1.mlp", "ln_f", "head"}) {
    EXPECT_TRUE(modules.contains(m)) << m;
  }
  // Every input is a parameter, a graph input or an earlier node's output.
  std::set<std::string> weights;
  for (const auto& w : g.initializers) weights.insert(w.name);
  EXPECT_EQ(weights.size(), static_cast<std::size_t>(2 + 16 * config.layers + 4));
  std::set<std::string> inputs;
  for (const auto& v : g.inputs) inputs.insert(v.name);
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    for (const auto& in : g.nodes[i].inputs) {
      if (in.empty() || weights.contains(in) || inputs.contains(in)) continue;
      ASSERT_TRUE(producer.contains(in)) << in;
      EXPECT_LT(producer[in], i);
    }
  }
  // The tokens [32, 16] and the causal mask [16, 16].
  ASSERT_EQ(g.inputs.size(), 2U);
  EXPECT_EQ(dims(g.inputs[0]), (std::vector<std::int64_t>{config.batch, 2 * config.length}));
  EXPECT_EQ(g.inputs[0].elem_type, 7);
  ASSERT_EQ(g.outputs.size(), 1U);
  EXPECT_EQ(g.outputs[0].name.substr(0, 5), "head/");
  EXPECT_EQ(dims(g.outputs[0]), (std::vector<std::int64_t>{config.batch, 2 * config.length, config.vocab}));
  // Softmax of block 0 reads the masked scores of blocks.0.attn.
  for (const auto& n : g.nodes) {
    if (n.op_type == "aten::softmax" && n.module == "blocks.0.attn") {
      EXPECT_EQ(g.nodes[producer.at(n.inputs[0])].op_type, "aten::add");
      EXPECT_EQ(n.name, "blocks.0/attn/aten::softmax_0");
    }
  }
}

}  // namespace
