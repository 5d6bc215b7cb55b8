// A run whose gradients flow the way a deep network's often do, for `tfdebug animate`
// (tests/cli/animate_test.sh, docs/animation.md) and the encoding times of docs/performance.md:
// a probe feeds a Session twelve layers of 32 x 32 weights for 200 steps; gradient norms shrink
// with depth (layer 11 gets about 1/1000 of layer 0: vanishing), decay as training settles, and
// layer 7's grow a hundredfold from step 120, are NaN at steps 150-159, and are back after.
//
//   write_flow_run OUT        writes OUT/metrics.jsonl (and report.json)
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "tfdebug/export/metrics_files.hpp"
#include "tfdebug/session/probe.hpp"
#include "tfdebug/session/session.hpp"

namespace {

constexpr int kLayers = 12;
constexpr int kSteps = 200;
constexpr int kSide = 32;

// The gradient norm of layer `layer` at `step`.
double gradient_norm(int layer, int step) {
  double norm = std::pow(10.0, -3.0 * layer / (kLayers - 1)) * (0.2 + 0.8 * std::exp(-step / 60.0));
  if (layer == 7 && step >= 120 && step < 150) norm *= std::pow(10.0, (step - 120) / 15.0);
  if (layer == 7 && step >= 150 && step < 160) norm = std::nan("");
  return norm;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: write_flow_run OUT\n");
    return 2;
  }
  const std::string out = argv[1];
  tfdebug::RunConfig config;
  config.run_dir = out;
  config.metrics.histogram_every = 0;
  tfdebug::Session session(config);
  session.add_sink(std::make_shared<tfdebug::JsonlMetricsSink>(out + "/metrics.jsonl"));
  tfdebug::Probe probe(session);
  std::vector<std::vector<float>> weights(kLayers, std::vector<float>(kSide * kSide));
  for (int l = 0; l < kLayers; ++l) {
    for (int i = 0; i < kSide * kSide; ++i) weights[l][i] = 0.05f * float((i * 7 + l) % 11 - 5) / 5.0f;
  }
  std::vector<float> gradient(kSide * kSide), update(kSide * kSide);
  for (int step = 0; step < kSteps; ++step) {
    probe.begin_step(step);
    for (int l = 0; l < kLayers; ++l) {
      const std::string name = "layers." + std::to_string(l) + ".weight";
      probe.observe_parameter(name,
                              tfdebug::TensorView(weights[l].data(), tfdebug::DType::f32, {kSide, kSide}));
      // A fixed pattern of unit norm, scaled: the module's grad_norm is gradient_norm(l, step).
      const double norm = gradient_norm(l, step);
      for (int i = 0; i < kSide * kSide; ++i) {
        gradient[i] = float(norm * (((i * 13 + step) % 7) - 3) / std::sqrt(28.0 * kSide * kSide / 7.0));
        update[i] = -0.01f * gradient[i];
      }
      probe.observe_gradient(name, tfdebug::TensorView(gradient.data(), tfdebug::DType::f32, {kSide, kSide}));
      probe.observe_update(name, tfdebug::TensorView(update.data(), tfdebug::DType::f32, {kSide, kSide}));
      for (int i = 0; i < kSide * kSide; ++i) weights[l][i] += update[i];
    }
    probe.end_step(2.0 * std::exp(-step / 80.0) + 0.1);
  }
  session.finish();
  return 0;
}
