// A run directory for the HTML report's tests and screenshots (tests/html/): a probe feeds a
// Session 60 steps of a two-block model (attention and MLP per block, an LM head) whose
// blocks.0.mlp ReLU is dead from the start and whose blocks.1.mlp log makes NaN from step 41,
// with metrics.jsonl, and a profile.json in the schema of docs/profiling.md (what `tfdebug demo
// --profile` writes there) so that the page's profile section has a real file to read.
//
//   write_html_run OUT_DIR
//
// Known values the tests assert: the loss at step s < 41 is 3 / (1 + 0.1 s) (step 10: 1.5);
// from step 41 it is NaN; the NaN is made by blocks.1.mlp / log in the forward pass.
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "tfdebug/export/metrics_files.hpp"
#include "tfdebug/session/probe.hpp"
#include "tfdebug/session/session.hpp"

namespace {

constexpr int kSteps = 60;
constexpr int kNanStep = 41;

tfdebug::TensorView view(const std::vector<float>& v, std::int64_t rows, std::int64_t cols) {
  return tfdebug::TensorView(v.data(), tfdebug::DType::f32, {rows, cols});
}

struct Layer {
  std::string name;  // the parameter's module
  std::vector<float> weight;
  float grad_scale;
};

void write_profile(const std::string& path) {
  // Two profiled steps of this model: module times nest (total includes submodules).
  std::ofstream out(path);
  out << R"({"format": "tfdebug-profile", "version": 1, "steps": 2, "step_ns": 4000000,
 "flops_per_step": 2.4e7, "flops_per_s": 6e9, "samples_per_step": 16, "tokens_per_step": 256,
 "samples_per_s": 4000, "tokens_per_s": 64000, "ops_seen": 96, "rows_overflowed": 0,
 "trace_evicted": 0, "callback_failures": 0,
 "ops": [
  {"op": "aten::mm", "module": "blocks.0.attn.q", "phase": "forward", "shapes": "[16,32],[32,32]", "calls": 2, "self_ns": 600000, "total_ns": 600000, "flops": 65536, "formula": "2mnk", "flops_per_s": 1.1e8, "alloc_bytes": 4096, "allocations": 2},
  {"op": "aten::mm", "module": "blocks.1.attn.q", "phase": "forward", "shapes": "[16,32],[32,32]", "calls": 2, "self_ns": 560000, "total_ns": 560000, "flops": 65536, "formula": "2mnk", "flops_per_s": 1.2e8, "alloc_bytes": 4096, "allocations": 2},
  {"op": "aten::mm", "module": "blocks.0.mlp.fc1", "phase": "forward", "shapes": "[16,32],[32,128]", "calls": 2, "self_ns": 1400000, "total_ns": 1400000, "flops": 262144, "formula": "2mnk", "flops_per_s": 1.9e8, "alloc_bytes": 16384, "allocations": 2},
  {"op": "aten::mm", "module": "blocks.1.mlp.fc1", "phase": "forward", "shapes": "[16,32],[32,128]", "calls": 2, "self_ns": 1300000, "total_ns": 1300000, "flops": 262144, "formula": "2mnk", "flops_per_s": 2e8, "alloc_bytes": 16384, "allocations": 2},
  {"op": "aten::log", "module": "blocks.1.mlp", "phase": "forward", "shapes": "[16,128]", "calls": 2, "self_ns": 200000, "total_ns": 200000, "flops": 4096, "formula": "n", "flops_per_s": 2e7, "alloc_bytes": 8192, "allocations": 2},
  {"op": "aten::mm", "module": "head", "phase": "forward", "shapes": "[16,32],[32,64]", "calls": 2, "self_ns": 900000, "total_ns": 900000, "flops": 131072, "formula": "2mnk", "flops_per_s": 1.5e8, "alloc_bytes": 8192, "allocations": 2},
  {"op": "aten::mm", "module": "head", "phase": "backward", "shapes": "[32,16],[16,64]", "calls": 4, "self_ns": 1800000, "total_ns": 1800000, "flops": 262144, "formula": "2mnk", "flops_per_s": 1.5e8, "alloc_bytes": 16384, "allocations": 4}
 ],
 "modules": [
  {"module": "", "self_ns": 1240000, "total_ns": 8000000, "self_flops": 0, "total_flops": 1052672, "flops_per_s": 1.3e8, "calls": 2},
  {"module": "blocks.0", "self_ns": 0, "total_ns": 2000000, "self_flops": 0, "total_flops": 327680, "flops_per_s": 1.6e8, "calls": 2},
  {"module": "blocks.0.attn.q", "self_ns": 600000, "total_ns": 600000, "self_flops": 65536, "total_flops": 65536, "flops_per_s": 1.1e8, "calls": 2},
  {"module": "blocks.0.mlp", "self_ns": 0, "total_ns": 1400000, "self_flops": 0, "total_flops": 262144, "flops_per_s": 1.9e8, "calls": 2},
  {"module": "blocks.0.mlp.fc1", "self_ns": 1400000, "total_ns": 1400000, "self_flops": 262144, "total_flops": 262144, "flops_per_s": 1.9e8, "calls": 2},
  {"module": "blocks.1", "self_ns": 0, "total_ns": 2060000, "self_flops": 0, "total_flops": 331776, "flops_per_s": 1.6e8, "calls": 2},
  {"module": "blocks.1.attn.q", "self_ns": 560000, "total_ns": 560000, "self_flops": 65536, "total_flops": 65536, "flops_per_s": 1.2e8, "calls": 2},
  {"module": "blocks.1.mlp", "self_ns": 200000, "total_ns": 1500000, "self_flops": 4096, "total_flops": 266240, "flops_per_s": 1.8e8, "calls": 2},
  {"module": "blocks.1.mlp.fc1", "self_ns": 1300000, "total_ns": 1300000, "self_flops": 262144, "total_flops": 262144, "flops_per_s": 2e8, "calls": 2},
  {"module": "head", "self_ns": 2700000, "total_ns": 2700000, "self_flops": 393216, "total_flops": 393216, "flops_per_s": 1.5e8, "calls": 6}
 ],
 "uncounted": [], "series": [], "bottlenecks": [],
 "memory": {"reported": true, "allocations": 18, "frees": 18, "allocated_bytes": 73728, "peak_bytes": 61440,
  "peak_ts_ns": 3100000, "peak_step": 0, "peak_op": "aten::mm", "peak_module": "head", "peak_phase": "backward",
  "end_bytes": 0, "timeline": [[0, 0], [600000, 4096], [2000000, 20480], [2200000, 28672], [3100000, 61440],
  [3600000, 36864], [4000000, 0], [4600000, 4096], [6000000, 20480], [7100000, 61440], [8000000, 0]],
  "alive_at_step_end": [], "rss_bytes": [], "malloc_in_use_bytes": -1, "malloc_mmap_bytes": -1}
})";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: write_html_run OUT_DIR\n");
    return 2;
  }
  const std::string out = argv[1];
  tfdebug::RunConfig config;
  config.run_dir = out;
  config.rules.get<tfdebug::DeadUnitsRule>().window = 5;
  tfdebug::Session session(config);
  session.add_sink(std::make_shared<tfdebug::JsonlMetricsSink>(out + "/metrics.jsonl"));
  tfdebug::Probe probe(session);
  std::vector<Layer> layers = {{"blocks.0.attn.q", {}, 1.0f},
                               {"blocks.0.mlp.fc1", {}, 0.02f},
                               {"blocks.1.attn.q", {}, 0.6f},
                               {"blocks.1.mlp.fc1", {}, 1.4f},
                               {"head", {}, 2.0f}};
  for (std::size_t l = 0; l < layers.size(); ++l) {
    layers[l].weight.resize(16 * 16);
    for (std::size_t i = 0; i < layers[l].weight.size(); ++i)
      layers[l].weight[i] = 0.25f * std::sin(float(i * 7 + l * 3)) + 0.05f * float(l);
  }
  for (int step = 0; step < kSteps; ++step) {
    probe.begin_step(step);
    for (const Layer& layer : layers)
      probe.observe_parameter(layer.name + ".weight", view(layer.weight, 16, 16));
    std::vector<float> attn(16 * 16);
    for (std::size_t i = 0; i < attn.size(); ++i)
      attn[i] = std::tanh(0.1f * float(i % 17) - 0.8f + 0.01f * float(step));
    probe.observe("blocks.0.attn.softmax", tfdebug::Phase::forward, view(attn, 16, 16), true);
    const std::vector<float> dead(16 * 32, 0.0f);  // blocks.0.mlp's ReLU never fires
    probe.observe("blocks.0.mlp.relu", tfdebug::Phase::forward, view(dead, 16, 32), true);
    probe.observe("blocks.1.attn.softmax", tfdebug::Phase::forward, view(attn, 16, 16), true);
    std::vector<float> hidden(16 * 32);
    for (std::size_t i = 0; i < hidden.size(); ++i)
      hidden[i] = 0.5f + 0.05f * float(i % 23) + 0.02f * float(step);
    if (step >= kNanStep) hidden[7] = std::log(-1.0f);  // NaN from finite inputs
    probe.observe("blocks.1.mlp.log", tfdebug::Phase::forward, view(hidden, 16, 32), true);
    for (std::size_t l = 0; l < layers.size(); ++l) {
      Layer& layer = layers[l];
      std::vector<float> grad(layer.weight.size()), update(layer.weight.size());
      const float decay = std::exp(-0.03f * float(step)) + 0.2f;
      for (std::size_t i = 0; i < grad.size(); ++i) {
        grad[i] = layer.grad_scale * 0.01f * decay * std::cos(float(i + std::size_t(step) * 3 + l));
        update[i] = -0.05f * grad[i];
      }
      probe.observe_gradient(layer.name + ".weight", view(grad, 16, 16));
      probe.observe_update(layer.name + ".weight", view(update, 16, 16));
      for (std::size_t i = 0; i < grad.size(); ++i) layer.weight[i] += update[i];
    }
    probe.end_step(step >= kNanStep ? std::nan("") : 3.0 / (1.0 + 0.1 * step));
  }
  session.finish();
  write_profile(out + "/profile.json");
  return 0;
}
