// `tfdebug graph --demo`: the demo transformer traced (graph_demo.hpp).
#include "graph_demo.hpp"

#include <torch/nn/module.h>

#include <map>
#include <optional>

#include "demo_model.hpp"
#include "tfdebug/export/onnx_export.hpp"
#include "tfdebug/torch/graph_trace.hpp"

namespace tfdebug::cli {

DemoGraph demo_graph(std::int64_t steps) {
  demo::DemoConfig config;
  config.steps = steps;
  demo::DemoTrainer trainer(config);
  for (std::int64_t step = 0; step < steps; ++step) (void)trainer.train_step();
  return demo_graph(trainer);
}

void write_demo_graph(const DemoGraph& graph, const std::string& path) {
  std::map<std::string, TensorView> weights;
  for (const DemoWeight& w : graph.weights)
    weights.emplace(w.name, TensorView(w.values.data(), DType::f32, w.shape));
  OnnxWriteOptions options;
  options.weights = [&](const std::string& name) -> std::optional<TensorView> {
    const auto found = weights.find(name);
    return found == weights.end() ? std::nullopt : std::optional(found->second);
  };
  write_onnx_model(graph.graph, path, options);
}

DemoGraph demo_graph(demo::DemoTrainer& trainer) {
  DemoGraph out;
  out.graph = torch::trace_graph(trainer.model(), trainer.forward_pass());
  for (const auto& p : trainer.model().named_parameters(/*recurse=*/true)) {
    const at::Tensor t = p.value().detach().to(at::kCPU, at::kFloat).contiguous();
    DemoWeight w;
    w.name = p.key();
    w.shape = t.sizes().vec();
    const float* values = t.data_ptr<float>();
    w.values.assign(values, values + t.numel());
    out.weights.push_back(std::move(w));
  }
  const TensorView embedding = trainer.token_embedding();
  out.vocab = embedding.shape(0);
  out.d_model = embedding.shape(1);
  const auto* values = static_cast<const float*>(embedding.data());
  out.token_embedding.assign(values, values + embedding.numel());
  for (std::int64_t token = 0; token < out.vocab; ++token) {
    out.token_labels.push_back(token == 0 ? "0 (separator)" : std::to_string(token));
  }
  return out;
}

}  // namespace tfdebug::cli
