// tfdebug heatmap FILE -o OUT.png: a saved matrix as a heatmap with a colour bar (docs/
// visualization.md). Attention probabilities are the usual one: [queries, keys], [heads, queries,
// keys] (one panel per head) or [batch, heads, queries, keys] (--index picks the batch entry),
// from any file tfdebug reads (.npy, .npz, safetensors, PyTorch, ONNX, GGUF).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "commands.hpp"
#include "safe_text.hpp"
#include "suggest.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/core/tensor.hpp"
#include "tfdebug/io/model_file.hpp"
#include "tfdebug/viz/plot.hpp"

namespace tfdebug::cli {
namespace {

constexpr std::int64_t kMaxValues = std::int64_t(64) << 20;  // 512 MB of doubles
constexpr std::size_t kMaxPanels = 16;

struct HeatmapArgs {
  std::string path;
  std::string tensor;
  std::string output;
  std::string labels;
  std::string title;
  std::int64_t index = 0;
  bool log = false;
  std::string map = "auto";
};

const io::NamedTensor& pick(const io::ModelFile& file, const HeatmapArgs& args) {
  const auto& tensors = file.tensors();
  if (tensors.empty()) throw Error(args.path + ": holds no tensor");
  if (args.tensor.empty()) {
    if (tensors.size() == 1) return tensors.front();
    std::string names;
    for (std::size_t i = 0; i < tensors.size() && i < 8; ++i)
      names += (i ? ", " : "") + terminal_safe(tensors[i].name);
    throw Error(args.path + " holds " + std::to_string(tensors.size()) +
                " tensors; choose one with --tensor (" + names + (tensors.size() > 8 ? ", ..." : "") + ")");
  }
  std::vector<std::string> names;
  for (const auto& t : tensors) {
    if (t.name == args.tensor) return t;
    names.push_back(t.name);
  }
  std::string message = args.path + ": no tensor named '" + terminal_safe(args.tensor) + "'";
  if (auto close = closest_name(args.tensor, names))
    message += "; did you mean '" + terminal_safe(*close) + "'?";
  throw Error(message);
}

std::vector<std::string> read_labels(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error(path + ": cannot open the labels file");
  std::vector<std::string> labels;
  for (std::string line; std::getline(in, line) && labels.size() <= 1'000'000;) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    labels.push_back(line);
  }
  return labels;
}

int run_heatmap(const HeatmapArgs& args) {
  if (!viz::format_for(args.output)) {
    throw Error("-o " + args.output + ": expected a .png, .svg or .pdf file name");
  }
  const io::ModelFile file = io::ModelFile::open(args.path);
  const io::NamedTensor& t = pick(file, args);
  if (t.quantized)
    throw Error(t.name + " is block-quantised (" + std::string(t.dtype_name()) +
                "); heatmap reads plain tensors");
  const auto shape = t.view.shape();
  if (shape.size() < 2 || shape.size() > 4) {
    throw Error(
        terminal_safe(t.name) + " has " + std::to_string(shape.size()) +
        " dimensions; a heatmap takes [rows, cols], [heads, rows, cols] or [batch, heads, rows, cols]");
  }
  if (t.view.numel() > kMaxValues)
    throw Error(terminal_safe(t.name) + " is too large to draw (over 64 Mi values)");
  const Tensor values = Tensor::copy_of(t.view, DType::f64);
  const auto* data = static_cast<const double*>(values.data());
  const std::int64_t rows = shape[shape.size() - 2], cols = shape[shape.size() - 1];
  std::int64_t heads = shape.size() >= 3 ? shape[shape.size() - 3] : 1;
  std::int64_t first = 0;  // the first value of the chosen batch entry
  if (shape.size() == 4) {
    if (args.index < 0 || args.index >= shape[0]) {
      throw Error("--index " + std::to_string(args.index) + " is outside the batch of " +
                  std::to_string(shape[0]));
    }
    first = args.index * heads * rows * cols;
  }
  if (rows == 0 || cols == 0) throw Error(terminal_safe(t.name) + " is empty");
  std::vector<std::string> labels;
  if (!args.labels.empty()) {
    labels = read_labels(args.labels);
    if (static_cast<std::int64_t>(labels.size()) != rows || rows != cols) {
      throw Error(args.labels + ": " + std::to_string(labels.size()) + " labels for a " +
                  std::to_string(rows) + " x " + std::to_string(cols) +
                  " matrix (expected one per row of a square matrix)");
    }
  }
  double lo = INFINITY, hi = -INFINITY;
  for (std::int64_t i = 0; i < values.numel(); ++i) {
    if (std::isfinite(data[i])) {
      lo = std::min(lo, data[i]);
      hi = std::max(hi, data[i]);
    }
  }
  const bool signed_values = lo < 0 && hi > 0;
  const viz::Colormap map = args.map == "diverging" || (args.map == "auto" && signed_values && !args.log)
                                ? viz::Colormap::diverging
                                : viz::Colormap::viridis;
  const std::size_t drawn = std::min<std::size_t>(static_cast<std::size_t>(heads), kMaxPanels);
  viz::Figure figure;
  figure.title = args.title.empty() ? terminal_safe(t.name) : args.title;
  figure.columns = static_cast<int>(std::min<std::size_t>(drawn, 4));
  for (std::size_t h = 0; h < drawn; ++h) {
    viz::Heatmap panel;
    if (heads > 1) panel.title = "head " + std::to_string(h);
    panel.rows = static_cast<std::size_t>(rows);
    panel.cols = static_cast<std::size_t>(cols);
    const double* begin = data + first + static_cast<std::int64_t>(h) * rows * cols;
    panel.values.assign(begin, begin + rows * cols);
    panel.row_labels = labels;
    panel.col_labels = labels;
    panel.x_title = "key";
    panel.y_title = "query";
    panel.map = map;
    panel.scale = args.log ? viz::Scale::log : viz::Scale::linear;
    // Heads share one colour scale, so that panels compare.
    if (!args.log && std::isfinite(lo)) {
      panel.lo = map == viz::Colormap::diverging ? -std::max(-lo, hi) : lo;
      panel.hi = map == viz::Colormap::diverging ? std::max(-lo, hi) : hi;
    }
    figure.panels.emplace_back(std::move(panel));
  }
  const int columns = figure.columns;
  const int panel_rows =
      static_cast<int>((drawn + static_cast<std::size_t>(columns) - 1) / static_cast<std::size_t>(columns));
  viz::save(figure, args.output, {columns * 480, panel_rows * 420 + 40});
  std::printf(
      "heatmap: %s (%zu panel%s of %lld x %lld%s)\n", terminal_safe(args.output).c_str(), drawn,
      drawn == 1 ? "" : "s", static_cast<long long>(rows), static_cast<long long>(cols),
      static_cast<std::size_t>(heads) > drawn
          ? ("; the first " + std::to_string(drawn) + " of " + std::to_string(heads) + " heads").c_str()
          : "");
  return 0;
}

}  // namespace

void register_heatmap(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<HeatmapArgs>();
  CLI::App* cmd = app.add_subcommand(
      "heatmap", "Draw a saved matrix (attention probabilities, activations) as a heatmap: PNG, SVG or PDF");
  cmd->add_option("file", args->path,
                  "A file holding the matrix: .npy, .npz, safetensors, PyTorch, ONNX, GGUF")
      ->required();
  cmd->add_option("-o,--output", args->output, "The picture to write: .png, .svg or .pdf")->required();
  cmd->add_option("--tensor", args->tensor, "The tensor to draw, when the file holds several");
  cmd->add_option("--index", args->index, "The batch entry of a [batch, heads, rows, cols] tensor")
      ->capture_default_str();
  cmd->add_option("--labels", args->labels, "A text file of one label per row and column (the tokens)");
  cmd->add_option("--title", args->title, "The figure's title (default: the tensor's name)");
  cmd->add_flag("--log", args->log, "Colour by log10 of the value (values <= 0 are grey)");
  cmd->add_option("--colormap", args->map,
                  "auto (diverging when values have both signs), viridis or diverging (blue-white-red)")
      ->check(CLI::IsMember({"auto", "viridis", "diverging"}))
      ->capture_default_str();
  cmd->callback([args, &exit_code] { exit_code = run_heatmap(*args); });
}

}  // namespace tfdebug::cli
