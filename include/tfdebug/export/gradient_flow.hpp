// Gradient flow over training, as an animation: a run's per-layer gradient norm (or update
// ratio), from its metrics.jsonl, drawn as a heatmap of layers x a window of steps, one frame per
// position of the window. `tfdebug animate` is this with a progress line.
//
//   tfdebug::GradientFlow flow = tfdebug::read_gradient_flow("runs/exp1", tfdebug::FlowMetric::grad_norm);
//   tfdebug::GradientFlowAnimation animation(flow, {.window = 50});
//   tfdebug::viz::write_gif(animation.frames(), "flow.gif", std::chrono::milliseconds(100));
//   tfdebug::viz::write_video(animation.frames(), "flow.webm", 10.0);
//
// Every frame shares one colour scale, the whole run's range (logarithmic when the values span
// more than a decade), so that a colour means the same value in every frame. Cells without a
// value (NaN, a step where the module had none, zero on a log scale) are grey.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "tfdebug/viz/animation.hpp"
#include "tfdebug/viz/plot.hpp"

namespace tfdebug {

enum class FlowMetric { grad_norm, update_ratio };
const char* flow_metric_name(FlowMetric metric) noexcept;  // "grad_norm", "update_ratio"

// One metric of every module at every step of a run: modules x steps, row-major.
struct GradientFlow {
  FlowMetric metric = FlowMetric::grad_norm;
  std::vector<std::string> modules;  // that had the metric at least once; numbers in natural order
  std::vector<std::int64_t> steps;   // as metrics.jsonl has them, in file order
  std::vector<double> values;        // NaN where a module had no value at a step
  double at(std::size_t module, std::size_t step) const { return values[module * steps.size() + step]; }
};

// Reads RUN_DIR/metrics.jsonl (or the metrics.jsonl file named). tfdebug::Error naming the file
// when it is missing or malformed (read_metrics_jsonl), or when no step has the metric.
GradientFlow read_gradient_flow(const std::filesystem::path& run, FlowMetric metric);

struct FlowAnimationOptions {
  std::size_t window = 50;       // steps a frame shows (at most the run's)
  std::size_t stride = 0;        // steps the window moves per frame; 0: 1, or more for max_frames
  std::size_t max_frames = 300;  // with stride 0: the most frames
  viz::Size size = {};
};

class GradientFlowAnimation {
 public:
  // tfdebug::Error for a window, stride or max_frames of 0.
  GradientFlowAnimation(GradientFlow flow, FlowAnimationOptions options);

  std::size_t frame_count() const noexcept { return starts_.size(); }
  std::size_t window() const noexcept { return window_; }
  std::size_t first_column(std::size_t frame) const { return starts_.at(frame); }  // into flow().steps

  // Frame `frame` as the heatmap it draws, and drawn.
  viz::Heatmap heatmap(std::size_t frame) const;
  viz::Image frame(std::size_t frame) const;
  viz::FrameSource frames() const;  // refers to this object: keep it alive while writing

  const GradientFlow& flow() const noexcept { return flow_; }
  const FlowAnimationOptions& options() const noexcept { return options_; }
  viz::Scale scale() const noexcept { return scale_; }
  double lo() const noexcept { return lo_; }  // the colour bar's ends, for every frame
  double hi() const noexcept { return hi_; }

 private:
  GradientFlow flow_;
  FlowAnimationOptions options_;
  std::size_t window_ = 0;
  std::vector<std::size_t> starts_;
  viz::Scale scale_ = viz::Scale::linear;
  double lo_ = 0, hi_ = 1;
};

}  // namespace tfdebug
