// Encoding times of animations (docs/performance.md, "Animations"): N frames of a gradient-flow
// heatmap (12 layers x a 50-step window, 800 x 500) rendered once into memory, then written as a
// GIF, a WebM (VP9) and an MP4 (H.264), each timed alone, with the file sizes.
// Usage: animation_bench [FRAMES] [DIR]   (default 200 frames, in the temporary folder)
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "tfdebug/viz/animation.hpp"
#include "tfdebug/viz/plot.hpp"

namespace {

using Clock = std::chrono::steady_clock;

// Wall-clock seconds of `work`; `cpu` gets the process's CPU seconds (every thread), which a
// machine shared with other work disturbs less.
double seconds_of(const std::function<void()>& work, double* cpu = nullptr) {
  const auto start = Clock::now();
  const std::clock_t cpu_start = std::clock();
  work();
  if (cpu != nullptr) *cpu = double(std::clock() - cpu_start) / CLOCKS_PER_SEC;
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Frame k: layer l's value at step s = k + c falls with depth and with time, layer 7 grows.
tfdebug::viz::Heatmap frame_plot(int k) {
  tfdebug::viz::Heatmap h;
  h.title = "gradient norm per layer, steps " + std::to_string(k) + "\u2013" + std::to_string(k + 49);
  h.x_title = "step";
  h.y_title = "layer";
  h.rows = 12;
  h.cols = 50;
  for (int l = 0; l < 12; ++l) {
    h.row_labels.push_back("layers." + std::to_string(l));
    for (int c = 0; c < 50; ++c) {
      const int s = k + c;
      double v = std::pow(10.0, -3.0 * l / 11) * (0.2 + 0.8 * std::exp(-s / 60.0));
      if (l == 7) v *= std::pow(10.0, s / 100.0);
      h.values.push_back(v);
    }
  }
  for (int c = 0; c < 50; ++c) h.col_labels.push_back(std::to_string(k + c));
  h.scale = tfdebug::viz::Scale::log;
  h.lo = 1e-4;
  h.hi = 10;
  h.value_title = "grad_norm";
  return h;
}

}  // namespace

int main(int argc, char** argv) {
  const int count = argc > 1 ? std::atoi(argv[1]) : 200;
  const std::filesystem::path dir = argc > 2
                                        ? std::filesystem::path(argv[2])
                                        : std::filesystem::temp_directory_path() / "tfdebug_animation_bench";
  std::filesystem::create_directories(dir);
  std::vector<tfdebug::viz::Image> frames;
  double cpu = 0;
  const double render = seconds_of(
      [&] {
        for (int k = 0; k < count; ++k)
          frames.push_back(tfdebug::viz::render(tfdebug::viz::Plot(frame_plot(k)), {800, 500}));
      },
      &cpu);
  std::printf("%d frames of 800 x 500: rendered in %.2f s (%.1f ms a frame; CPU %.2f s)\n", count, render,
              1000 * render / count, cpu);
  const auto report = [&](const char* what, const std::filesystem::path& path, double s) {
    std::printf("%-24s %6.2f s  %6.1f ms/frame  CPU %6.2f s  %8.1f KB\n", what, s, 1000 * s / count, cpu,
                double(std::filesystem::file_size(path)) / 1024);
  };
  const auto gif = dir / "bench.gif";
  tfdebug::viz::GifInfo info;
  report("GIF (giflib)", gif, seconds_of([&] { info = tfdebug::viz::write_gif(frames, gif); }, &cpu));
  std::printf("  (%s; %zu frames past 256 colours)\n",
              info.global_palette ? "one palette" : "a palette per frame", info.quantized_frames);
  for (const char* name : {"bench.webm", "bench.mp4"}) {
    const auto path = dir / name;
    tfdebug::viz::VideoInfo video;
    const double s = seconds_of([&] { video = tfdebug::viz::write_video(frames, path, 10.0); }, &cpu);
    report((std::string(name) + " (" + video.codec + ")").c_str(), path, s);
  }
  std::filesystem::remove_all(dir);
}
