// Private: the format readers. Each parses bytes already in memory (a mapped file), checks every
// length, offset and shape product against them, and appends views into those bytes.
// `origin` names the file in error messages. Used by model_file.cpp and the fuzz targets.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "tfdebug/core/model_graph.hpp"
#include "tfdebug/io/model_file.hpp"

namespace tfdebug::io::detail {

// Throws tfdebug::Error("<origin>: <problem>"): every reader error names the file first.
[[noreturn]] void fail(const std::string& origin, const std::string& problem);

// Note [Memory budget]: bytes that views point into when a format needs converting (inflated
// .npz and .pt entries, big-endian .npy, ONNX typed fields). A small file can claim a lot of
// them (a 1 MB deflate bomb inflates to 1 GB), so every allocation is charged against a budget
// for the whole model, 256 MiB by default beyond the mapped files (TFDEBUG_MEMORY_BUDGET_MB
// changes it), and one that would pass it fails naming the file, the size and the budget.
class OwnedBuffers {
 public:
  static constexpr std::uint64_t kDefaultBudget = std::uint64_t{256} << 20;

  explicit OwnedBuffers(std::uint64_t budget = kDefaultBudget) : budget_(budget) {}

  // A zeroed buffer of `bytes` for `where` (a file, an entry); throws tfdebug::Error past the budget.
  std::vector<std::byte>& allocate(std::uint64_t bytes, const std::string& where);
  std::uint64_t used() const noexcept { return used_; }
  std::uint64_t budget() const noexcept { return budget_; }
  std::size_t size() const noexcept { return buffers_.size(); }  // buffers allocated
  bool empty() const noexcept { return buffers_.empty(); }
  // Frees every buffer (views into them dangle) and gives their bytes back to the budget.
  void clear() noexcept {
    buffers_.clear();
    used_ = 0;
  }

 private:
  std::deque<std::vector<std::byte>> buffers_;  // a deque: earlier buffers never move
  std::uint64_t used_ = 0;
  std::uint64_t budget_;
};

// The budget from TFDEBUG_MEMORY_BUDGET_MB, or OwnedBuffers::kDefaultBudget.
std::uint64_t memory_budget();

void read_safetensors(const std::string& origin, std::span<const std::byte> bytes,
                      std::vector<NamedTensor>& out, std::map<std::string, std::string>& metadata);

// `name` is the tensor's name (the file's stem, or the .npz entry's).
void read_npy(const std::string& origin, const std::string& name, std::span<const std::byte> bytes,
              std::vector<NamedTensor>& out, OwnedBuffers& owned);

// A .npz archive: every <name>.npy entry, decompressed into `owned`.
void read_npz(const std::string& origin, std::span<const std::byte> bytes, std::vector<NamedTensor>& out,
              OwnedBuffers& owned);

// GGUF v2/v3: plain tensors as views, block-quantised ones as QuantizedViews into `bytes`.
void read_gguf(const std::string& origin, std::span<const std::byte> bytes, std::vector<NamedTensor>& out,
               std::map<std::string, std::string>& metadata);

// A torch.save checkpoint (zip format): tensors become views into the storages in `bytes`;
// scalar leaves of the pickled object go into `metadata`. Deflated entries (torch never writes
// them) are inflated into `owned`. data.pkl runs in a restricted unpickler (src/io/pickle.hpp).
void read_pytorch(const std::string& origin, std::span<const std::byte> bytes, std::vector<NamedTensor>& out,
                  std::map<std::string, std::string>& metadata, OwnedBuffers& owned);
// A readable ZIP archive with a data.pkl entry (torch.save, or torch.jit.save: read_pytorch refuses).
bool is_pytorch_zip(std::span<const std::byte> bytes) noexcept;

// Maps an external data file an ONNX model names, relative to the model's folder (read_onnx has
// already refused absolute paths and ".."), and returns its bytes, valid while the ModelFile
// lives. Throws tfdebug::Error when the file cannot be opened.
using ExternalData = std::function<std::span<const std::byte>(const std::string& location)>;

// An ONNX ModelProto (Note [ONNX tensors] in onnx.cpp says which tensors): raw_data and external
// data become views, typed fields (float_data, int32_data, ...) are decoded into `owned`.
// `graph` receives the model's graph summary.
void read_onnx(const std::string& origin, std::span<const std::byte> bytes, const ExternalData& external,
               std::vector<NamedTensor>& out, std::map<std::string, std::string>& metadata,
               OwnedBuffers& owned, ModelGraph& graph);
// True when the top-level fields of `bytes` are those of an ONNX ModelProto (protobuf has no magic).
bool is_onnx(std::span<const std::byte> bytes);
// True when the first bytes look like a ModelProto (ir_version, then a ModelProto key): a file
// that starts so but is not is_onnx is reported as a damaged ONNX model.
bool starts_like_onnx(std::span<const std::byte> bytes);

enum class Format { safetensors, npy, npz, gguf, safetensors_index, pytorch, onnx, unknown };
// Recognises a format by its first bytes (and, for JSON, by the index's "weight_map").
Format sniff(std::span<const std::byte> bytes);

}  // namespace tfdebug::io::detail
