#include "tfdebug/export/inspection_plots.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <unordered_map>

#include "tfdebug/core/error.hpp"
#include "tfdebug/core/histogram.hpp"
#include "tfdebug/core/quantized.hpp"
#include "tfdebug/io/model_file.hpp"
#include "tfdebug/io/model_names.hpp"

namespace tfdebug {
namespace {

// Values of a block-quantised tensor decoded this many blocks at a time (never all of them).
constexpr std::int64_t kDecodeBlocks = 4096;

std::string nonfinite_note(const Stats& s) {
  std::string note;
  auto part = [&](std::int64_t n, const char* what) {
    if (n == 0) return;
    if (!note.empty()) note += ", ";
    note.append(std::to_string(n)).append(" ").append(what);
  };
  part(s.nan, "NaN");
  part(s.pos_inf, "+inf");
  part(s.neg_inf, "-inf");
  return note.empty() ? note : note + " not shown";
}

// A tensor's name within its layer: "model.layers.3.self_attn.q_proj.weight" -> "self_attn.q_proj.weight".
std::string short_name(const std::string& name, std::optional<int> layer) {
  if (!layer) return name;
  const std::string head = std::to_string(*layer).append(".");
  const std::string mark = std::string(".").append(head);
  const auto at = name.find(mark);
  if (at != std::string::npos) return name.substr(at + mark.size());
  return name.rfind(head, 0) == 0 ? name.substr(head.size()) : name;
}

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string text;
  for (std::size_t d = 0; d < shape.size(); ++d) text.append(d ? "x" : "").append(std::to_string(shape[d]));
  return text.empty() ? "scalar" : text;
}

class Writer {
 public:
  Writer(const std::vector<std::filesystem::path>& paths, const std::filesystem::path& dir,
         const InspectionPlotOptions& options)
      : dir_(dir), options_(options) {
    for (const auto& p : paths) {
      files_.push_back(io::ModelFile::open(p.string()));
      for (const io::NamedTensor& t : files_.back().tensors()) by_name_.emplace(t.name, &t);
    }
  }

  // A figure of histograms of `tensors` (the largest kMaxPanels), or nothing when none has a
  // finite value.
  bool histograms(const std::string& title, std::vector<const inspect::TensorReport*> tensors,
                  const std::string& file, std::optional<int> layer, InspectionPlots& out) {
    std::stable_sort(tensors.begin(), tensors.end(),
                     [](const auto* a, const auto* b) { return a->stats.count > b->stats.count; });
    viz::Figure figure;
    figure.title = title;
    figure.columns = 3;
    std::size_t left_out = tensors.size() > kMaxPanels ? tensors.size() - kMaxPanels : 0;
    tensors.resize(std::min(tensors.size(), kMaxPanels));
    for (const inspect::TensorReport* r : tensors) {
      const auto found = by_name_.find(r->name);
      const Stats& s = r->stats;
      const std::int64_t finite = s.count - s.nan - s.pos_inf - s.neg_inf;
      if (found == by_name_.end() || finite == 0) continue;
      viz::HistogramPlot h;
      h.title = short_name(r->name, layer) + "  " + r->dtype + " " + shape_text(r->shape);
      h.x.title = "value";
      h.y.title = "count";
      h.y.scale = viz::Scale::log;  // tails matter: a few outliers are invisible on a linear axis
      h.note = nonfinite_note(s);
      const Histogram counted = value_histogram(*found->second, s, options_.bins);
      h.edges = counted.edges;
      h.counts.assign(counted.counts.begin(), counted.counts.end());
      figure.panels.emplace_back(std::move(h));
      ++out.tensors_drawn;
    }
    if (figure.panels.empty()) return false;
    if (left_out > 0) {
      figure.title.append(" (the ").append(std::to_string(figure.panels.size())).append(" largest; ");
      figure.title.append(std::to_string(left_out)).append(" more not shown)");
    }
    save(figure, file, out);
    return true;
  }

  void save(const viz::Figure& figure, const std::string& file, InspectionPlots& out) {
    const std::size_t columns = static_cast<std::size_t>(figure.columns);
    const std::size_t rows = (figure.panels.size() + columns - 1) / columns;
    const std::size_t used = std::min(columns, figure.panels.size());
    const viz::Size size{static_cast<int>(used) * options_.panel.width,
                         static_cast<int>(rows) * options_.panel.height + (figure.title.empty() ? 0 : 36)};
    const std::filesystem::path path = dir_ / (file + "." + options_.format);
    viz::save(figure, path, size);
    out.files.push_back(path);
  }

 private:
  std::filesystem::path dir_;
  InspectionPlotOptions options_;
  std::vector<io::ModelFile> files_;
  std::unordered_map<std::string, const io::NamedTensor*> by_name_;
};

}  // namespace

Histogram value_histogram(const io::NamedTensor& tensor, const Stats& stats, int bins) {
  double lo = stats.min, hi = stats.max;
  if (stats.finite() == 0) lo = hi = 0;
  if (lo == hi) {
    lo -= lo == 0 ? 1 : std::fabs(lo) * 0.01;
    hi += hi == 0 ? 1 : std::fabs(hi) * 0.01;
  }
  Histogram out;
  out.counts.assign(static_cast<std::size_t>(bins), 0);
  auto add = [&](const Histogram& h) {
    for (std::size_t i = 0; i < h.counts.size(); ++i) out.counts[i] += h.counts[i];
    out.below += h.below;
    out.above += h.above;
    out.nan += h.nan;
    out.pos_inf += h.pos_inf;
    out.neg_inf += h.neg_inf;
  };
  if (!tensor.quantized) {
    add(histogram_fixed(tensor.view, bins, lo, hi));
  } else {
    const QuantizedView& q = *tensor.quantized;
    const BlockFormatInfo& info = block_format_info(q.format);
    std::vector<float> values(static_cast<std::size_t>(kDecodeBlocks * info.block_elements));
    for (std::int64_t block = 0; block < q.blocks(); block += kDecodeBlocks) {
      const std::int64_t n = std::min(kDecodeBlocks, q.blocks() - block);
      dequantize(q.format, q.data + block * info.block_bytes, n, values.data());
      const std::int64_t elements = n * info.block_elements;
      add(histogram_fixed(TensorView(values.data(), DType::f32, {elements}), bins, lo, hi));
    }
  }
  // The edges as the bins were counted (histogram_fixed's own, from lo and hi).
  for (int i = 0; i <= bins; ++i) out.edges.push_back(lo + (hi - lo) * i / bins);
  return out;
}

InspectionPlots write_inspection_plots(const std::vector<std::filesystem::path>& paths,
                                       const inspect::Inspection& inspection,
                                       const std::filesystem::path& dir,
                                       const InspectionPlotOptions& options) {
  if (!viz::format_for("x." + options.format)) {
    throw Error("unknown picture format '" + options.format + "' (expected png, svg or pdf)");
  }
  if (options.bins < 1 || options.bins > 1000) throw Error("--bins must be 1 to 1000");
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw Error(dir.string() + ": cannot create the folder: " + ec.message());
  Writer writer(paths, dir, options);
  InspectionPlots out;

  std::map<int, std::vector<const inspect::TensorReport*>> layers;
  std::vector<const inspect::TensorReport*> other;
  for (const inspect::TensorReport& r : inspection.tensors) {
    if (const auto layer = io::layer_index(r.name)) {
      layers[*layer].push_back(&r);
    } else {
      other.push_back(&r);
    }
  }
  out.layers = layers.size();

  if (!inspection.layers.empty()) {
    viz::LinePlot depth;
    depth.title = "scale of the weights by layer";
    depth.x.title = "layer";
    depth.x.integer = true;
    depth.y.title = "value";
    depth.y.scale = viz::Scale::log;
    depth.markers = true;
    viz::Series rms, abs_max;
    rms.name = "RMS";
    abs_max.name = "largest |value|";
    for (const inspect::LayerSummary& l : inspection.layers) {
      rms.x.push_back(l.layer);
      rms.y.push_back(l.rms);
      abs_max.x.push_back(l.layer);
      abs_max.y.push_back(l.abs_max);
    }
    depth.series = {std::move(rms), std::move(abs_max)};
    viz::Figure figure;
    figure.panels.emplace_back(std::move(depth));
    const std::filesystem::path path = dir / ("depth." + options.format);
    viz::save(figure, path, {900, 420});
    out.files.push_back(path);
  }

  // At most kMaxLayerFigures layers, spread evenly over the depth (first and last included).
  std::vector<int> numbers;
  numbers.reserve(layers.size());
  for (const auto& [number, tensors] : layers) numbers.push_back(number);
  std::vector<int> chosen = numbers;
  if (numbers.size() > kMaxLayerFigures) {
    chosen.clear();
    for (std::size_t i = 0; i < kMaxLayerFigures; ++i) {
      chosen.push_back(numbers[i * (numbers.size() - 1) / (kMaxLayerFigures - 1)]);
    }
  }
  for (int number : chosen) {
    char file[32];
    std::snprintf(file, sizeof file, "layer_%03d", number);
    if (writer.histograms("layer " + std::to_string(number), layers[number], file, number, out))
      ++out.layers_drawn;
  }
  if (!other.empty()) writer.histograms("outside numbered layers", other, "other", std::nullopt, out);
  return out;
}

}  // namespace tfdebug
