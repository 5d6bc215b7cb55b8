// The gradient-flow animation of a run directory: metrics.jsonl written by the JsonlMetricsSink
// with known values, read back as a flow, framed, encoded, and decoded by ffmpeg: a known cell's
// colour is the colour map's for its value.
#include "tfdebug/export/gradient_flow.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "../viz/ffmpeg_reader.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/export/metrics_files.hpp"
#include "tfdebug/viz/color.hpp"

namespace tfdebug {
namespace {

using testing::TempDir;

constexpr int kSteps = 30;

// blocks.10's gradient norm at step s: 10^(-s/10), three decades over the run.
double blocks10(int s) {
  return std::pow(10.0, -s / 10.0);
}

ModuleMetrics module(std::string name, std::optional<double> grad_norm,
                     std::optional<double> update_ratio = {}) {
  ModuleMetrics m;
  m.module = std::move(name);
  m.grad_norm = grad_norm;
  m.update_ratio = update_ratio;
  return m;
}

// A run of 30 steps: blocks.2 at 0.5 always (NaN at step 12); blocks.10 falling from 1 to 10^-2.9;
// head from step 5 on only, at 0.01 * (s + 1); update ratios only for head.
void write_metrics(const std::filesystem::path& run) {
  JsonlMetricsSink sink(run / "metrics.jsonl");
  for (int s = 0; s < kSteps; ++s) {
    StepMetrics m;
    m.step = 100 + s;
    m.loss = 1.0;
    m.modules.push_back(module("blocks.10", blocks10(s)));
    m.modules.push_back(module("blocks.2", s == 12 ? std::nan("") : 0.5));
    if (s >= 5) m.modules.push_back(module("head", 0.01 * (s + 1), 1e-3));
    sink.on_step(m);
  }
  sink.on_run_end(RunSummary{});
}

TEST(GradientFlow, ReadsEveryModuleAtEveryStepInNaturalOrder) {
  TempDir dir("flow_read");
  write_metrics(dir.path());
  const GradientFlow flow = read_gradient_flow(dir.path(), FlowMetric::grad_norm);
  ASSERT_EQ(flow.modules, (std::vector<std::string>{"blocks.2", "blocks.10", "head"}));
  ASSERT_EQ(flow.steps.size(), std::size_t(kSteps));
  EXPECT_EQ(flow.steps.front(), 100);
  EXPECT_EQ(flow.steps.back(), 129);
  EXPECT_EQ(flow.at(0, 0), 0.5);
  EXPECT_TRUE(std::isnan(flow.at(0, 12)));
  EXPECT_DOUBLE_EQ(flow.at(1, 7), blocks10(7));
  EXPECT_TRUE(std::isnan(flow.at(2, 4)));  // head has no value before step 5
  EXPECT_DOUBLE_EQ(flow.at(2, 5), 0.06);
  // The metrics.jsonl file itself works as well as its folder.
  EXPECT_EQ(read_gradient_flow(dir / "metrics.jsonl", FlowMetric::grad_norm).values.size(),
            flow.values.size());

  const GradientFlow ratio = read_gradient_flow(dir.path(), FlowMetric::update_ratio);
  EXPECT_EQ(ratio.modules, (std::vector<std::string>{"head"}));
}

TEST(GradientFlow, WindowsCoverEveryStepAndShareOneLogScale) {
  TempDir dir("flow_frames");
  write_metrics(dir.path());
  const GradientFlow flow = read_gradient_flow(dir.path(), FlowMetric::grad_norm);
  const GradientFlowAnimation every_step(flow, {.window = 10});
  EXPECT_EQ(every_step.frame_count(), 21u);  // one per step the window can move: 30 - 10 + 1
  const GradientFlowAnimation strided(flow, {.window = 10, .stride = 7});
  ASSERT_EQ(strided.frame_count(), 4u);  // 0, 7, 14, and 20 so that step 129 is shown
  EXPECT_EQ(strided.first_column(2), 14u);
  EXPECT_EQ(strided.first_column(3), 20u);
  const GradientFlowAnimation capped(flow, {.window = 10, .max_frames = 5});
  EXPECT_EQ(capped.frame_count(), 5u);  // stride 5: 0, 5, 10, 15, 20
  const GradientFlowAnimation whole(flow, {.window = 1000});
  EXPECT_EQ(whole.frame_count(), 1u);
  EXPECT_EQ(whole.window(), std::size_t(kSteps));

  EXPECT_EQ(strided.scale(), viz::Scale::log);
  EXPECT_DOUBLE_EQ(strided.lo(), blocks10(29));
  EXPECT_DOUBLE_EQ(strided.hi(), 1.0);
  const viz::Heatmap h = strided.heatmap(1);
  EXPECT_EQ(h.title, "gradient norm per layer, steps 107\u2013116");
  EXPECT_EQ(h.rows, 3u);
  EXPECT_EQ(h.cols, 10u);
  EXPECT_EQ(h.col_labels.front(), "107");
  EXPECT_EQ(h.row_labels, flow.modules);
  EXPECT_EQ(*h.lo, strided.lo());

  EXPECT_THROW(GradientFlowAnimation(flow, {.window = 0}), Error);
}

// The colour a cell of value v has on the animation's scale.
viz::Rgb expected_color(const GradientFlowAnimation& a, double v) {
  const double t = (std::log10(v) - std::log10(a.lo())) / (std::log10(a.hi()) - std::log10(a.lo()));
  return viz::map_color(viz::Colormap::viridis, t);
}

// The centre of cell (row, col) of frame `frame`, in pixels.
std::pair<int, int> cell_centre(const GradientFlowAnimation& a, std::size_t frame, std::size_t row,
                                std::size_t col) {
  const viz::Layout l = viz::layout(viz::Plot(a.heatmap(frame)), a.options().size);
  return {int(l.to_pixel_x(double(col) + 0.5)), int(l.to_pixel_y(double(row) + 0.5))};
}

void expect_near(viz::Rgb got, viz::Rgb want, int tolerance, const std::string& where) {
  EXPECT_LE(std::abs(got.r - want.r), tolerance) << where << ": red " << int(got.r) << " vs " << int(want.r);
  EXPECT_LE(std::abs(got.g - want.g), tolerance)
      << where << ": green " << int(got.g) << " vs " << int(want.g);
  EXPECT_LE(std::abs(got.b - want.b), tolerance) << where << ": blue " << int(got.b) << " vs " << int(want.b);
}

TEST(GradientFlow, DecodedFramesShowEachCellInItsColour) {
  TempDir dir("flow_decode");
  write_metrics(dir.path());
  const GradientFlowAnimation a(read_gradient_flow(dir.path(), FlowMetric::grad_norm),
                                {.window = 10, .stride = 7, .size = {640, 400}});
  // Frame 2 shows steps 114-123 (columns 14-23): blocks.10 at column 17 is 10^-1.7; blocks.2 at
  // column 14 is 0.5; frame 1 has blocks.2's NaN of step 112 (column 12, the window's sixth).
  for (const char* name : {"flow.gif", "flow.webm", "flow.mp4"}) {
    const auto path = dir / name;
    const bool gif = std::string(name).ends_with(".gif");
    if (gif) {
      viz::write_gif(a.frames(), path);
    } else {
      viz::write_video(a.frames(), path, 10.0);
    }
    EXPECT_EQ(testing::probe_frame_count(path), 4) << name;
    const int tolerance = gif ? 0 : 6;  // GIF: flat areas are exact (Note [Flat areas first])
    const viz::Image frame2 = testing::decode_frame(path, 2);
    const auto [x1, y1] = cell_centre(a, 2, 1, 3);
    expect_near(frame2.at(x1, y1), expected_color(a, blocks10(17)), tolerance,
                std::string(name) + " blocks.10");
    const auto [x0, y0] = cell_centre(a, 2, 0, 0);
    expect_near(frame2.at(x0, y0), expected_color(a, 0.5), tolerance, std::string(name) + " blocks.2");
    const viz::Image frame1 = testing::decode_frame(path, 1);
    const auto [xn, yn] = cell_centre(a, 1, 0, 5);
    expect_near(frame1.at(xn, yn), viz::missing_color(), tolerance, std::string(name) + " NaN cell");
  }
}

TEST(GradientFlow, MissingMetricsAreErrorsNamingTheFile) {
  TempDir dir("flow_errors");
  try {
    read_gradient_flow(dir.path(), FlowMetric::grad_norm);
    FAIL() << "read a run without metrics.jsonl";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              (dir / "metrics.jsonl").string() +
                  ": not found: gradient flow is drawn from the per-step metrics a run "
                  "writes with a JsonlMetricsSink (tfdebug demo --out writes it)");
  }
  {
    JsonlMetricsSink sink(dir / "metrics.jsonl");
    StepMetrics m;
    m.modules.push_back(module("fc", 1.0));
    sink.on_step(m);
    sink.on_run_end(RunSummary{});
  }
  try {
    read_gradient_flow(dir.path(), FlowMetric::update_ratio);
    FAIL() << "no update_ratio anywhere";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), (dir / "metrics.jsonl").string() +
                                         ": no step has update_ratio for any module (grad_norm comes from "
                                         "observed gradients, update_ratio from observed updates of weight "
                                         "matrices)");
  }
}

}  // namespace
}  // namespace tfdebug
