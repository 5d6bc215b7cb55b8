// tfdebug animate RUN_DIR -o flow.gif|flow.webm|flow.mp4: the run's gradient flow (per-layer
// gradient norm or update ratio over a moving window of steps) as an animated GIF or a video
// (docs/animation.md). The frames are tfdebug::GradientFlowAnimation's; the encoders viz's.
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "safe_text.hpp"
#include "terminal.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/export/gradient_flow.hpp"
#include "tfdebug/viz/animation.hpp"

namespace tfdebug::cli {
namespace {

struct AnimateArgs {
  std::string run_dir;
  std::string output;
  std::string metric = "grad_norm";
  std::size_t window = 50;
  std::size_t stride = 0;
  double fps = 10;
  std::string size = "800x500";
  bool json = false;
};

viz::Size parse_size(const std::string& text) {
  const auto number = [](const std::string& digits) {
    if (digits.empty() || digits.size() > 5 ||
        !std::all_of(digits.begin(), digits.end(), [](unsigned char c) { return std::isdigit(c) != 0; }))
      return -1;
    return std::stoi(digits);
  };
  const std::size_t x = text.find('x');
  const int width = x == std::string::npos ? -1 : number(text.substr(0, x));
  const int height = x == std::string::npos ? -1 : number(text.substr(x + 1));
  if (width < 200 || height < 150 || width > 4096 || height > 4096) {
    throw Error("--size '" + text +
                "': expected WIDTHxHEIGHT in pixels, from 200x150 to 4096x4096 (e.g. 800x500)");
  }
  return {width, height};
}

// "\r  frame 12 of 200" on a terminal's stderr, rewritten in place; nothing elsewhere.
class ProgressLine {
 public:
  ProgressLine() : shown_(::isatty(STDERR_FILENO) == 1) {}
  void update(const char* what, std::size_t done, std::size_t total) {
    if (!shown_) return;
    std::fprintf(stderr, "\r  %s frame %zu of %zu (%zu%%)\x1b[K", what, done, total,
                 total ? 100 * done / total : 0);
    std::fflush(stderr);
  }
  void clear() {
    if (shown_) std::fputs("\r\x1b[K", stderr);
  }

 private:
  bool shown_;
};

int run_animate(const AnimateArgs& args) {
  const std::filesystem::path output = args.output;
  const bool gif = [&] {
    std::string ext = output.extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(),
                   [](unsigned char c) { return char(std::tolower(c)); });
    return ext == ".gif";
  }();
  if (!gif && !viz::is_video_path(output)) {
    throw Error(output.string() + ": unknown animation extension '" + output.extension().string() +
                "'; expected .gif, .webm or .mp4");
  }
  if (!(args.fps > 0 && args.fps <= 100)) {
    throw Error("--fps " + format_number(args.fps) + ": expected a frame rate above 0 and at most 100");
  }
  const FlowMetric metric = args.metric == "grad_norm" ? FlowMetric::grad_norm : FlowMetric::update_ratio;
  GradientFlow flow = read_gradient_flow(args.run_dir, metric);
  const std::size_t modules = flow.modules.size(), steps = flow.steps.size();
  const GradientFlowAnimation animation(
      std::move(flow), {.window = args.window, .stride = args.stride, .size = parse_size(args.size)});

  ProgressLine progress;
  std::string format;               // for people
  nlohmann::ordered_json encoding;  // for --json
  int width = 0, height = 0;
  if (gif) {
    const auto delay = std::chrono::milliseconds(std::lround(1000.0 / args.fps));
    const viz::GifInfo info = viz::write_gif(
        animation.frames(), output, delay,
        [&](std::size_t done, std::size_t total) { progress.update("encoding", done, total); });
    format = info.global_palette ? "GIF, one palette: every colour exact"
             : info.quantized_frames == 0
                 ? "GIF, a palette per frame: every colour exact"
                 : "GIF; " + format_count(std::int64_t(info.quantized_frames)) +
                       " frames past 256 colours: flat areas exact, edges of text near";
    width = info.width;
    height = info.height;
    encoding = {{"format", "gif"},
                {"global_palette", info.global_palette},
                {"quantized_frames", info.quantized_frames}};
  } else {
    const viz::VideoInfo info = viz::write_video(
        animation.frames(), output, args.fps,
        {.progress = [&](std::size_t done, std::size_t total) { progress.update("encoding", done, total); }});
    format = info.codec;
    std::string ext = output.extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(),
                   [](unsigned char c) { return char(std::tolower(c)); });
    encoding = {{"format", ext.substr(1)}, {"codec", info.codec}};
    width = info.width;
    height = info.height;
  }
  progress.clear();

  const GradientFlow& f = animation.flow();
  if (args.json) {
    nlohmann::ordered_json doc = {{"output", output.string()}};
    doc.update(encoding);
    doc.update(nlohmann::ordered_json{{"frames", animation.frame_count()},
                                      {"width", width},
                                      {"height", height},
                                      {"fps", args.fps},
                                      {"metric", flow_metric_name(f.metric)},
                                      {"modules", modules},
                                      {"steps", steps},
                                      {"window", animation.window()},
                                      {"scale", animation.scale() == viz::Scale::log ? "log" : "linear"},
                                      {"lo", animation.lo()},
                                      {"hi", animation.hi()}});
    std::puts(doc.dump(1).c_str());
    return 0;
  }
  KeyValueTable table;
  table.add("wrote", terminal_safe(output.string()));
  table.add("format", format);
  table.add("frames", format_count(std::int64_t(animation.frame_count())) + " of " + std::to_string(width) +
                          " x " + std::to_string(height) + " at " + format_number(args.fps) + " fps");
  table.add("metric", std::string(flow_metric_name(f.metric)) + ", " + format_count(std::int64_t(modules)) +
                          (modules == 1 ? " layer" : " layers") + " x " + format_count(std::int64_t(steps)) +
                          (steps == 1 ? " step" : " steps") + ", " +
                          format_count(std::int64_t(animation.window())) + " a frame");
  table.add("colour scale", std::string(animation.scale() == viz::Scale::log ? "log" : "linear") + ", " +
                                format_number(animation.lo()) + " to " + format_number(animation.hi()));
  table.print(stdout);
  return 0;
}

}  // namespace

void register_animate(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<AnimateArgs>();
  CLI::App* cmd = app.add_subcommand(
      "animate", "Animate a run's gradient flow: per-layer gradient norm over steps, as a GIF or a video");
  cmd->add_option("run_dir", args->run_dir, "The run directory (with metrics.jsonl), or its metrics.jsonl")
      ->required();
  cmd->add_option("-o,--output", args->output, "The animation: .gif (looping), .webm (VP9) or .mp4 (H.264)")
      ->required();
  cmd->add_option("--metric", args->metric, "What the colours show")
      ->check(CLI::IsMember({"grad_norm", "update_ratio"}))
      ->capture_default_str();
  cmd->add_option("--window", args->window, "Steps a frame shows")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--stride", args->stride,
                  "Steps the window moves per frame (default: 1, or more to keep to 300 frames)");
  cmd->add_option("--fps", args->fps, "Frames per second")->capture_default_str();
  cmd->add_option("--size", args->size, "Frame size in pixels, WIDTHxHEIGHT")->capture_default_str();
  cmd->add_flag("--json", args->json, "Print what was written as JSON");
  cmd->footer(
      "Every frame shares the run's colour scale (log when values span more than a decade); grey\n"
      "cells have no value (NaN, or no gradient that step).\n"
      "Example: tfdebug animate runs/log -o flow.gif --window 20\n"
      "Exit code: 0 written; 2 a missing or malformed input, or an output that cannot be written.");
  cmd->callback([args, &exit_code] { exit_code = run_animate(*args); });
}

}  // namespace tfdebug::cli
