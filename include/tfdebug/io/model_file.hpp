// Model files: named tensors from checkpoints, recognised by content, memory-mapped, with every
// length, offset and shape product checked against the file.
//
//   tfdebug::io::ModelFile model = tfdebug::io::ModelFile::open("model.safetensors");
//   for (const tfdebug::io::NamedTensor& t : model.tensors())
//     tfdebug::compute_stats(t.view);      // views point into the mapped files
//
// Formats: safetensors (a single file, or a sharded checkpoint through its
// *.safetensors.index.json), NumPy .npy (format versions 1, 2 and 3; C and Fortran order;
// little- and big-endian), .npz (stored or deflated, ZIP64; deflated arrays are decompressed into
// memory the ModelFile owns, stored ones are read in place), GGUF v2/v3 (plain tensors as views,
// block-quantised ones as QuantizedViews), PyTorch torch.save checkpoints (the zip format of
// PyTorch >= 1.6: .pt, .pth, pytorch_model.bin; data.pkl is interpreted by a restricted
// unpickler that runs nothing; tensors are views into the file), and ONNX models (initializers
// and Constant-node tensors of every graph and subgraph; external data files; the graph itself
// through graph()). A folder opens every file in it that is one of these. Bad input throws
// tfdebug::Error with one line naming the file and the problem.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tfdebug/core/model_graph.hpp"
#include "tfdebug/core/quantized.hpp"
#include "tfdebug/core/tensor_view.hpp"

namespace tfdebug::io {

struct NamedTensor {
  std::string name;
  std::string file;  // the file it was read from
  TensorView view;   // the elements, valid while the ModelFile lives; empty when quantized
  // Block-quantised tensors (GGUF q4_0, q8_0, q4_k, ...): read through compute_stats(QuantizedView)
  // or dequantize(), one chunk at a time.
  std::optional<QuantizedView> quantized{};

  std::span<const std::int64_t> shape() const noexcept {
    return quantized ? std::span<const std::int64_t>(quantized->shape) : view.shape();
  }
  std::int64_t numel() const noexcept { return quantized ? quantized->numel() : view.numel(); }
  // "f32", "bf16", ... or the block format, "q4_k".
  std::string_view dtype_name() const noexcept {
    return quantized ? block_format_info(quantized->format).name : tfdebug::dtype_name(view.dtype());
  }
};

class ModelFile {
 public:
  // A file (format recognised by its first bytes, not its name), a *.safetensors.index.json,
  // or a folder. Throws tfdebug::Error.
  static ModelFile open(const std::string& path);

  ModelFile();
  ModelFile(ModelFile&&) noexcept;
  ModelFile& operator=(ModelFile&&) noexcept;
  ~ModelFile();

  const std::vector<NamedTensor>& tensors() const noexcept { return tensors_; }
  const std::vector<std::string>& files() const noexcept { return files_; }
  // safetensors __metadata__ (and the index's "metadata"), string values only; for PyTorch files
  // the scalar leaves of the checkpoint by dotted name ("epoch" -> "3").
  const std::map<std::string, std::string>& metadata() const noexcept { return metadata_; }
  // "safetensors", "npy", "npz", "pytorch", or a "+"-joined list for a folder of several formats.
  const std::string& format() const noexcept { return format_; }
  // The graph of an ONNX model (for a folder, of its first .onnx file); null for formats without
  // a graph.
  const ModelGraph* graph() const noexcept;
  // MappedFile::drop_pages for whichever of this model's mapped files holds `data`; memory the
  // ModelFile owns (decompressed or converted copies) is never touched.
  void drop_pages(const void* data, std::size_t size) const noexcept;

  struct Storage;  // mapped files and converted copies that the views point into

 private:
  std::vector<NamedTensor> tensors_;
  std::vector<std::string> files_;
  std::map<std::string, std::string> metadata_;
  std::string format_;
  std::unique_ptr<Storage> storage_;

  friend class ModelFileBuilder;
};

}  // namespace tfdebug::io
