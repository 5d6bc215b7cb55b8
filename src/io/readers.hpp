// Private: the format readers. Each parses bytes already in memory (a mapped file), checks every
// length, offset and shape product against them, and appends views into those bytes.
// `origin` names the file in error messages. Used by model_file.cpp and the fuzz targets.
#pragma once

#include <cstddef>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "tfdebug/io/model_file.hpp"

namespace tfdebug::io::detail {

// Throws tfdebug::Error("<origin>: <problem>"): every reader error names the file first.
[[noreturn]] void fail(const std::string& origin, const std::string& problem);

// Bytes that views may point into when a format needs converting (big-endian .npy).
using OwnedBuffers = std::vector<std::vector<std::byte>>;

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

enum class Format { safetensors, npy, npz, gguf, safetensors_index, pytorch, unknown };
// Recognises a format by its first bytes (and, for JSON, by the index's "weight_map").
Format sniff(std::span<const std::byte> bytes);

}  // namespace tfdebug::io::detail
