// Pictures of a checkpoint (`tfdebug inspect FILE --plots DIR`): how the weights of every layer are
// distributed, and how their scale changes with depth.
//
//   tfdebug::inspect::Inspection report = tfdebug::inspect::inspect({"model.safetensors"});
//   auto written = tfdebug::write_inspection_plots({"model.safetensors"}, report, "plots");
//   // plots/depth.png, plots/layer_000.png, plots/layer_001.png, ..., plots/other.png
//
// - depth.png: RMS and largest |value| of each numbered layer (log axis), when the names have
//   layer numbers (io::layer_index).
// - layer_NNN.png: a histogram of every tensor of layer NNN (small multiples, at most
//   kMaxPanels, the largest first), bins over the tensor's finite [min, max], NaN and
//   infinities counted in the panel's note.
// - other.png: the largest tensors outside numbered layers (embeddings, heads, norms).
// A model with more than kMaxLayerFigures layers gets figures of that many layers spread
// evenly from the first to the last (the answer says which). The files are re-read for the
// histograms (inspect keeps statistics, not values), one tensor at a time.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "tfdebug/core/histogram.hpp"
#include "tfdebug/core/stats.hpp"
#include "tfdebug/inspect/inspection.hpp"
#include "tfdebug/io/model_file.hpp"
#include "tfdebug/viz/plot.hpp"

namespace tfdebug {

inline constexpr std::size_t kMaxPanels = 12;
inline constexpr std::size_t kMaxLayerFigures = 64;

struct InspectionPlotOptions {
  int bins = 50;
  std::string format = "png";  // png, svg or pdf
  viz::Size panel{360, 240};   // one histogram's size; figures are laid out 3 panels wide
};

struct InspectionPlots {
  std::vector<std::filesystem::path> files;  // in the order written
  std::size_t layers = 0;                    // numbered layers in the checkpoint
  std::size_t layers_drawn = 0;              // of them, with a figure
  std::size_t tensors_drawn = 0;
};

// Writes the figures into `dir` (created if missing). tfdebug::Error naming the file when a
// model file cannot be re-read or a picture cannot be written, or for an unknown format.
InspectionPlots write_inspection_plots(const std::vector<std::filesystem::path>& paths,
                                       const inspect::Inspection& inspection,
                                       const std::filesystem::path& dir,
                                       const InspectionPlotOptions& options = {});

// The histogram of one tensor's values, what each panel of --plots draws and what
// `inspect --histogram` prints: `bins` equal bins over the finite [stats.min, stats.max] (1% either
// side of the value when they are equal, [-1, 1] around zero or when nothing is finite), NaN and
// infinities counted apart. A block-quantised tensor is decoded a few thousand blocks at a time.
// tfdebug::Error when bins < 1.
Histogram value_histogram(const io::NamedTensor& tensor, const Stats& stats, int bins);

}  // namespace tfdebug
