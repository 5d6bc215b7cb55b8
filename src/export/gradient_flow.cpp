#include "tfdebug/export/gradient_flow.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <map>
#include <utility>

#include "tfdebug/core/error.hpp"
#include "tfdebug/export/metrics_files.hpp"

namespace tfdebug {
namespace {

// "blocks.2" before "blocks.10": runs of digits compare as numbers, the rest as text.
bool natural_less(const std::string& a, const std::string& b) {
  std::size_t i = 0, j = 0;
  const auto digit = [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; };
  while (i < a.size() && j < b.size()) {
    if (digit(a[i]) && digit(b[j])) {
      std::size_t ei = i, ej = j;
      while (ei < a.size() && digit(a[ei])) ++ei;
      while (ej < b.size() && digit(b[ej])) ++ej;
      // Without leading zeros, the longer run is the larger number.
      std::size_t zi = i, zj = j;
      while (zi + 1 < ei && a[zi] == '0') ++zi;
      while (zj + 1 < ej && b[zj] == '0') ++zj;
      if (ei - zi != ej - zj) return ei - zi < ej - zj;
      const int order = a.compare(zi, ei - zi, b, zj, ej - zj);
      if (order != 0) return order < 0;
      i = ei;
      j = ej;
      continue;
    }
    if (a[i] != b[j]) return a[i] < b[j];
    ++i;
    ++j;
  }
  return a.size() - i < b.size() - j || (a.size() - i == b.size() - j && a < b);
}

const char* metric_title(FlowMetric metric) {
  return metric == FlowMetric::grad_norm ? "gradient norm" : "update / weight ratio";
}

}  // namespace

const char* flow_metric_name(FlowMetric metric) noexcept {
  return metric == FlowMetric::grad_norm ? "grad_norm" : "update_ratio";
}

GradientFlow read_gradient_flow(const std::filesystem::path& run, FlowMetric metric) {
  std::error_code ec;
  if (!std::filesystem::exists(run, ec)) {
    throw Error(run.string() +
                ": not found: expected a run directory (with metrics.jsonl) or a metrics.jsonl file");
  }
  const std::filesystem::path file = std::filesystem::is_directory(run, ec) ? run / "metrics.jsonl" : run;
  if (!std::filesystem::exists(file, ec)) {
    throw Error(file.string() +
                ": not found: gradient flow is drawn from the per-step metrics a run writes with a "
                "JsonlMetricsSink (tfdebug demo --out writes it)");
  }
  GradientFlow flow;
  flow.metric = metric;
  std::map<std::string, std::vector<std::pair<std::size_t, double>>> by_module;
  read_metrics_jsonl(file, [&](const StepMetrics& m) {
    const std::size_t column = flow.steps.size();
    flow.steps.push_back(m.step);
    for (const ModuleMetrics& module : m.modules) {
      const std::optional<double>& value =
          metric == FlowMetric::grad_norm ? module.grad_norm : module.update_ratio;
      if (value) by_module[module.module].emplace_back(column, *value);
    }
  });
  if (by_module.empty()) {
    throw Error(file.string() + ": no step has " + std::string(flow_metric_name(metric)) +
                " for any module (grad_norm comes from observed gradients, update_ratio from observed "
                "updates of weight matrices)");
  }
  for (const auto& entry : by_module) flow.modules.push_back(entry.first);
  std::sort(flow.modules.begin(), flow.modules.end(), natural_less);
  flow.values.assign(flow.modules.size() * flow.steps.size(), std::numeric_limits<double>::quiet_NaN());
  for (std::size_t row = 0; row < flow.modules.size(); ++row) {
    for (const auto& [column, value] : by_module[flow.modules[row]]) {
      flow.values[row * flow.steps.size() + column] = value;
    }
  }
  return flow;
}

GradientFlowAnimation::GradientFlowAnimation(GradientFlow flow, FlowAnimationOptions options)
    : flow_(std::move(flow)), options_(options) {
  if (options_.window == 0) throw Error("gradient flow: a window of 0 steps shows nothing; give 1 or more");
  if (options_.max_frames == 0)
    throw Error("gradient flow: at most 0 frames is no animation; give 1 or more");
  TFDEBUG_ASSERT(!flow_.steps.empty() && flow_.values.size() == flow_.modules.size() * flow_.steps.size(),
                 "gradient flow of the wrong shape");
  const std::size_t n = flow_.steps.size();
  window_ = std::min(options_.window, n);
  // Note [Window positions]: frames start every `stride` columns; when that leaves the last
  // steps out, one more frame ends at the last step, so that every step is in some frame.
  std::size_t stride = options_.stride;
  if (stride == 0) {
    const std::size_t moves = n - window_;
    stride = options_.max_frames == 1
                 ? std::max<std::size_t>(1, moves + 1)
                 : std::max<std::size_t>(1, (moves + options_.max_frames - 2) / (options_.max_frames - 1));
  }
  for (std::size_t start = 0; start + window_ <= n; start += stride) starts_.push_back(start);
  if (starts_.back() + window_ < n && options_.max_frames > 1) starts_.push_back(n - window_);

  // Note [One colour scale]: the range of the whole run, not of a frame, so that colours compare
  // across frames; logarithmic when positive values span more than a decade (gradient norms
  // usually span several).
  double lowest = std::numeric_limits<double>::infinity(), highest = -lowest, lowest_positive = lowest;
  for (const double v : flow_.values) {
    if (!std::isfinite(v)) continue;
    lowest = std::min(lowest, v);
    highest = std::max(highest, v);
    if (v > 0) lowest_positive = std::min(lowest_positive, v);
  }
  if (!std::isfinite(lowest)) {
    lo_ = 0;
    hi_ = 1;
  } else if (std::isfinite(lowest_positive) && highest > 10 * lowest_positive) {
    scale_ = viz::Scale::log;
    lo_ = lowest_positive;
    hi_ = highest;
  } else {
    lo_ = lowest;
    hi_ = highest;
  }
}

viz::Heatmap GradientFlowAnimation::heatmap(std::size_t frame) const {
  const std::size_t start = starts_.at(frame);
  viz::Heatmap h;
  h.title = std::string(metric_title(flow_.metric)) + " per layer, steps " +
            std::to_string(flow_.steps[start]) + "\u2013" + std::to_string(flow_.steps[start + window_ - 1]);
  h.x_title = "step";
  h.y_title = "layer";
  h.rows = flow_.modules.size();
  h.cols = window_;
  h.values.reserve(h.rows * h.cols);
  for (std::size_t row = 0; row < h.rows; ++row) {
    for (std::size_t col = 0; col < h.cols; ++col) h.values.push_back(flow_.at(row, start + col));
  }
  for (const std::string& module : flow_.modules)
    h.row_labels.push_back(module.empty() ? "(top level)" : module);
  for (std::size_t col = 0; col < h.cols; ++col)
    h.col_labels.push_back(std::to_string(flow_.steps[start + col]));
  h.map = viz::Colormap::viridis;
  h.scale = scale_;
  h.lo = lo_;
  h.hi = hi_;
  h.value_title = flow_metric_name(flow_.metric);
  return h;
}

viz::Image GradientFlowAnimation::frame(std::size_t frame) const {
  return viz::render(viz::Plot(heatmap(frame)), options_.size);
}

viz::FrameSource GradientFlowAnimation::frames() const {
  return {.count = frame_count(), .frame = [this](std::size_t i) { return frame(i); }};
}

}  // namespace tfdebug
