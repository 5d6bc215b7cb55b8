#include "tfdebug/inspect/inspection.hpp"

#include <fnmatch.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "checkpoint_rules.hpp"
#include "code_findings.hpp"
#include "tensor_scan.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/core/tensor.hpp"
#include "tfdebug/io/model_file.hpp"
#include "tfdebug/io/model_names.hpp"
#include "tfdebug/io/pickle_scan.hpp"

namespace tfdebug::inspect {

namespace {

// Identical tensors under different names (tied embeddings are normal, so: info). Equal
// statistics make candidates; their bytes decide.
void identical_tensors(const std::vector<const io::NamedTensor*>& tensors,
                       const std::vector<detail::TensorScan>& scans, std::vector<Finding>& findings) {
  using Key = std::tuple<std::string, std::vector<std::int64_t>, std::int64_t, std::int64_t, double, double,
                         double, double>;
  std::map<Key, std::vector<const io::NamedTensor*>> seen;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const io::NamedTensor& t = *tensors[i];
    const Stats& s = scans[i].stats;
    if (t.numel() < 2 || s.finite() == 0) continue;
    auto& group =
        seen[Key(std::string(t.dtype_name()), std::vector<std::int64_t>(t.shape().begin(), t.shape().end()),
                 s.zero, s.negative, s.min, s.max, s.mean, s.l2)];
    const auto same = std::find_if(group.begin(), group.end(), [&](const io::NamedTensor* other) {
      return detail::same_values(*other, t);
    });
    if (same == group.end()) {
      group.push_back(&t);
      continue;
    }
    Finding f = detail::tensor_finding(
        "identical_tensors", Severity::info, t.name, "identical to '" + (*same)->name + "'",
        "expected for tied weights; otherwise one of them was not trained or was copied by mistake");
    f.evidence = {{"same_as", (*same)->name}};
    findings.push_back(std::move(f));
  }
}

std::vector<LayerSummary> layer_summaries(const std::vector<TensorReport>& tensors) {
  std::map<int, LayerSummary> layers;
  std::map<int, double> squares;
  for (const TensorReport& r : tensors) {
    const Stats& s = r.stats;
    const auto layer = io::layer_index(r.name);
    if (!layer || s.finite() == 0) continue;
    LayerSummary& l = layers[*layer];
    l.layer = *layer;
    l.params += s.finite();
    squares[*layer] += s.l2 * s.l2;
    l.abs_max = std::max(l.abs_max, s.abs_max);
  }
  std::vector<LayerSummary> out;
  for (auto& [layer, l] : layers) {
    l.rms = std::sqrt(squares[layer] / static_cast<double>(l.params));
    out.push_back(l);
  }
  return out;
}

// TensorFlow's default buckets of every value (a second pass); block-quantised tensors are decoded
// one at a time.
std::vector<std::int64_t> tensorflow_counts(const io::NamedTensor& t) {
  if (t.quantized) {
    Tensor decoded(DType::f32, t.quantized->shape);
    dequantize(t.quantized->format, t.quantized->data, t.quantized->blocks(),
               static_cast<float*>(decoded.data()));
    return histogram_tensorflow(decoded.view()).counts;
  }
  return histogram_tensorflow(t.view).counts;
}

}  // namespace

std::int64_t Inspection::parameters() const noexcept {
  std::int64_t n = 0;
  for (const TensorReport& t : tensors) n += t.stats.count;
  return n;
}

bool Inspection::any_at_least(Severity severity) const noexcept {
  return std::any_of(findings.begin(), findings.end(),
                     [&](const Finding& f) { return f.severity >= severity; });
}

Inspection inspect(const std::vector<std::filesystem::path>& paths, const Options& options) {
  std::vector<io::ModelFile> models;
  models.reserve(paths.size());
  // Note [Code findings]: every file read is also scanned for pickle globals (pickle_scan.hpp).
  // A file that runs code under torch.load is an error finding, also when tfdebug cannot read its
  // tensors (an object-array .npy, a pickle torch.save never writes): the danger is the news.
  std::vector<Finding> code;
  std::vector<ModelFileInfo> unread;
  for (const auto& path : paths) {
    try {
      models.push_back(io::ModelFile::open(path));
    } catch (const Error&) {
      std::error_code ec;
      if (std::filesystem::is_directory(path, ec)) throw;
      const io::FileScan scan = io::scan_file(path.string());
      if (scan.worst() != io::GlobalRisk::runs_code) throw;
      detail::code_findings(scan, code);
      unread.push_back({path.string(), scan.container});
    }
  }
  for (const auto& m : models) {
    for (const auto& f : m.files()) detail::code_findings(io::scan_file(f), code);
  }
  std::vector<const io::NamedTensor*> selected;
  for (const auto& m : models) {
    for (const auto& t : m.tensors()) {
      if (options.filter.empty() || fnmatch(options.filter.c_str(), t.name.c_str(), 0) == 0)
        selected.push_back(&t);
    }
  }
  // Note [Released pages] (tensor_scan.cpp): resident memory stays a few pieces.
  const auto release = [&models](const void* data, std::size_t bytes) {
    for (const auto& m : models) m.drop_pages(data, bytes);
  };
  const std::vector<detail::TensorScan> scans =
      detail::scan_tensors(selected, options.stats, options.threads, options.progress, release);

  Inspection out;
  out.findings = std::move(code);
  out.files = std::move(unread);
  for (const auto& m : models) out.tensors_in_files += m.tensors().size();
  for (const auto& m : models) {
    for (const auto& f : m.files()) out.files.push_back({f, m.format()});
    for (const auto& [k, v] : m.metadata()) out.metadata[k] = v;
  }
  for (std::size_t i = 0; i < selected.size(); ++i) {
    const io::NamedTensor& t = *selected[i];
    detail::tensor_rules(t, scans[i], out.findings);
    TensorReport r;
    r.name = t.name;
    r.file = t.file;
    r.dtype = std::string(t.dtype_name());
    r.shape.assign(t.shape().begin(), t.shape().end());
    r.stats = scans[i].stats;
    r.first_nonfinite = scans[i].first_nonfinite;
    r.sparkline = scans[i].histogram;
    if (options.tensorflow_histograms) r.tensorflow_histogram = tensorflow_counts(t);
    out.tensors.push_back(std::move(r));
  }
  identical_tensors(selected, scans, out.findings);
  out.layers = layer_summaries(out.tensors);
  return out;
}

}  // namespace tfdebug::inspect
