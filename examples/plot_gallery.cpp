// plot_gallery DIGITS OUT_DIR: tfdebug::viz on real data, the 1797 handwritten digits of
// examples/data (8 x 8 pixels, values 0..16, the first ten are the digits 0 to 9 in order):
// small multiples of heatmaps, a histogram with a log axis, a line plot with markers, ridges.
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "tfdebug/viz/plot.hpp"

namespace viz = tfdebug::viz;

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: plot_gallery examples/data/digits_1797x64.f32 OUT_DIR\n");
    return 2;
  }
  constexpr int kImages = 1797, kPixels = 64;
  std::vector<float> digits(kImages * kPixels);
  std::ifstream in(argv[1], std::ios::binary);
  if (!in.read(reinterpret_cast<char*>(digits.data()),
               static_cast<std::streamsize>(digits.size() * sizeof(float)))) {
    std::fprintf(stderr, "%s: expected %d x %d float32 values\n", argv[1], kImages, kPixels);
    return 2;
  }
  const std::string out = argv[2];

  viz::Figure first_ten;
  first_ten.title = "the first ten digits (8 x 8 pixels)";
  first_ten.columns = 5;
  for (int d = 0; d < 10; ++d) {
    viz::Heatmap h;
    h.title = "digit " + std::to_string(d);
    h.rows = h.cols = 8;
    h.values.assign(digits.begin() + d * kPixels, digits.begin() + (d + 1) * kPixels);
    h.lo = 0;
    h.hi = 16;
    first_ten.panels.emplace_back(std::move(h));
  }
  viz::save(first_ten, out + "/digits.png", {1200, 560});

  viz::HistogramPlot values;
  values.title = "every pixel value of 1797 digits";
  values.x.title = "intensity";
  values.y.title = "pixels";
  values.y.scale = viz::Scale::log;
  for (int i = 0; i <= 17; ++i) values.edges.push_back(i - 0.5);
  values.counts.assign(17, 0);
  for (float v : digits) values.counts[static_cast<std::size_t>(v)] += 1;

  viz::LinePlot spread;
  spread.title = "spread of each pixel over the digits";
  spread.x.title = "pixel (row-major)";
  spread.x.integer = true;
  spread.y.title = "intensity";
  spread.markers = true;
  viz::Series stddev;
  stddev.name = "std";
  viz::Series mean;
  mean.name = "mean";
  for (int p = 0; p < kPixels; ++p) {
    double sum = 0, squares = 0;
    for (int i = 0; i < kImages; ++i) {
      sum += digits[i * kPixels + p];
      squares += digits[i * kPixels + p] * digits[i * kPixels + p];
    }
    stddev.x.push_back(p);
    stddev.y.push_back(std::sqrt(squares / kImages - (sum / kImages) * (sum / kImages)));
    mean.x.push_back(p);
    mean.y.push_back(sum / kImages);
  }
  spread.series = {stddev, mean};

  viz::RidgePlot rows;
  rows.title = "pixel values by image row";
  rows.x.title = "intensity";
  rows.step_title = "row";
  for (int i = 0; i <= 17; ++i) rows.edges.push_back(i - 0.5);
  for (int r = 0; r < 8; ++r) {
    rows.steps.push_back(r);
    std::vector<double> counts(17, 0);
    for (int i = 0; i < kImages; ++i) {
      for (int c = 0; c < 8; ++c) counts[static_cast<std::size_t>(digits[i * kPixels + r * 8 + c])] += 1;
    }
    rows.counts.push_back(counts);
  }

  viz::Figure page;
  page.columns = 3;
  page.panels = {values, spread, rows};
  viz::save(page, out + "/digits_stats.png", {1500, 420});
  viz::save(page, out + "/digits_stats.svg", {1500, 420});
  viz::save(page, out + "/digits_stats.pdf", {1500, 420});
  std::printf("wrote %s/digits.png, digits_stats.png, .svg and .pdf\n", out.c_str());
  return 0;
}
