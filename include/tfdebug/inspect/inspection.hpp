// tfdebug::inspect: is this checkpoint healthy? One pass over every tensor of one or more model
// files (safetensors, GGUF, PyTorch, ONNX, NumPy: tfdebug::io), the statistics of each, a summary
// per numbered layer, and the checkpoint rules' findings (docs/inspect.md): NaN/Inf, all-zero and
// constant tensors, values beyond a target dtype, dead rows and columns, outlier channels,
// initialisation scale, identical tensors. What `tfdebug inspect` prints; the files it writes for
// other tools come from tfdebug::export (inspection_report.hpp).
//
//   tfdebug::inspect::Options options;
//   options.stats.target = tfdebug::DType::f16;           // flag values beyond f16's range
//   const tfdebug::inspect::Inspection report = tfdebug::inspect::inspect({"model.safetensors"}, options);
//   for (const tfdebug::Finding& f : report.findings)
//     std::printf("%s %s: %s\n", std::string(tfdebug::severity_name(f.severity)).c_str(), f.op.c_str(),
//                 f.message.c_str());
//
// A checkpoint Finding names its tensor in `op` (the full name) and `module` (the name up to its
// last '.'); `step` is 0.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tfdebug/core/histogram.hpp"
#include "tfdebug/core/stats.hpp"
#include "tfdebug/session/finding.hpp"

namespace tfdebug::inspect {

inline constexpr int kSparkBins = 12;

struct Options {
  // StatsOptions::target flags values beyond a dtype's range (rules target_overflow,
  // target_underflow); `threads` is ignored (see below).
  StatsOptions stats;
  int threads = 0;     // worker threads of the scan (0: one per core)
  std::string filter;  // only tensors whose name matches this glob (fnmatch), e.g. "*.attn.*"
  // Also count every tensor in TensorFlow's default histogram buckets (TensorReport::
  // tensorflow_histogram, what TensorBoard shows): a second pass over each tensor.
  bool tensorflow_histograms = false;
  // Called a few times a second from the calling thread with the bytes scanned so far.
  std::function<void(std::int64_t done, std::int64_t total)> progress;
};

struct TensorReport {
  std::string name;
  std::string file;
  std::string dtype;  // "f32", "bf16", "q4_0", ...
  std::vector<std::int64_t> shape;
  Stats stats;                                     // over every value (block-quantised tensors decoded)
  std::int64_t first_nonfinite = -1;               // flat index (logical order) of the first NaN/Inf
  Histogram sparkline;                             // kSparkBins bins over [min, max], from a sample
  std::vector<std::int64_t> tensorflow_histogram;  // Options::tensorflow_histograms only
};

// The parameters of one numbered layer ("layers.3.", "h.3.", "blk.3."): how scales evolve with depth.
struct LayerSummary {
  int layer = 0;
  std::int64_t params = 0;  // finite values
  double rms = 0;
  double abs_max = 0;
};

struct ModelFileInfo {
  std::string path;
  std::string format;  // "safetensors", "gguf", "onnx", ...
};

struct Inspection {
  std::vector<ModelFileInfo> files;             // every file read (shards, external data)
  std::map<std::string, std::string> metadata;  // the files' metadata, merged
  std::vector<TensorReport> tensors;            // in file order
  std::size_t tensors_in_files = 0;             // before Options::filter chose `tensors`
  std::vector<LayerSummary> layers;             // by layer number
  std::vector<Finding> findings;                // pickle code (scan), tensor by tensor, identical tensors

  std::int64_t parameters() const noexcept;  // values of all tensors
  // Whether a finding reaches `severity`.
  bool any_at_least(Severity severity) const noexcept;
};

// Opens `paths` (files or folders, as tfdebug::io::ModelFile::open) and inspects them. Throws
// tfdebug::Error for a file that cannot be read, naming it.
Inspection inspect(const std::vector<std::filesystem::path>& paths, const Options& options = {});

}  // namespace tfdebug::inspect
