// What a picture costs: render (to pixels), PNG encoding and SVG for the sizes tfdebug draws.
//   build/release/bench/viz_bench --benchmark_min_time=0.5
// The peer is the physical limit of the output: writing the same bytes of RGBA (memcpy of the
// raster) takes about 0.1 ms for 800 x 500, so the numbers are the cost of drawing.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstring>

#include "tfdebug/viz/plot.hpp"

namespace viz = tfdebug::viz;

namespace {

viz::LinePlot lines(int series, int points) {
  viz::LinePlot plot;
  plot.title = "lines";
  for (int s = 0; s < series; ++s) {
    viz::Series line;
    line.name = "series " + std::to_string(s);
    for (int i = 0; i < points; ++i) {
      line.x.push_back(i);
      line.y.push_back(std::sin(i * 0.01 + s) + s);
    }
    plot.series.push_back(std::move(line));
  }
  return plot;
}

viz::Heatmap heatmap(std::size_t rows, std::size_t cols) {
  viz::Heatmap h;
  h.rows = rows;
  h.cols = cols;
  for (std::size_t i = 0; i < rows * cols; ++i) h.values.push_back(std::sin(static_cast<double>(i) * 0.001));
  return h;
}

void BM_LinePlot(benchmark::State& state) {
  const viz::LinePlot plot = lines(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)));
  for (auto _ : state) benchmark::DoNotOptimize(viz::render(plot));
  state.SetItemsProcessed(state.iterations() * state.range(0) * state.range(1));
}
BENCHMARK(BM_LinePlot)->Args({1, 1000})->Args({8, 10000})->Args({1, 1000000})->Unit(benchmark::kMillisecond);

void BM_Heatmap(benchmark::State& state) {
  const viz::Heatmap h =
      heatmap(static_cast<std::size_t>(state.range(0)), static_cast<std::size_t>(state.range(1)));
  for (auto _ : state) benchmark::DoNotOptimize(viz::render(h));
  state.SetItemsProcessed(state.iterations() * state.range(0) * state.range(1));
}
// 20 x 80: the demo's modules x steps (vector cells); 100 x 1000 and 1000 x 1000: rasterised.
BENCHMARK(BM_Heatmap)->Args({20, 80})->Args({100, 1000})->Args({1000, 1000})->Unit(benchmark::kMillisecond);

void BM_HeatmapSvg(benchmark::State& state) {
  const viz::Heatmap h =
      heatmap(static_cast<std::size_t>(state.range(0)), static_cast<std::size_t>(state.range(1)));
  for (auto _ : state) benchmark::DoNotOptimize(viz::render_svg(h));
}
BENCHMARK(BM_HeatmapSvg)->Args({20, 80})->Args({100, 1000})->Unit(benchmark::kMillisecond);

void BM_RasterCopy(benchmark::State& state) {
  viz::Image a(800, 500), b(800, 500);
  for (auto _ : state) {
    std::memcpy(b.data(), a.data(), a.stride() * 500);
    benchmark::DoNotOptimize(b.data());
  }
}
BENCHMARK(BM_RasterCopy)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
