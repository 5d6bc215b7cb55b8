#include "tfdebug/io/model_file.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "quote.hpp"
#include "readers.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/io/mapped_file.hpp"

namespace tfdebug::io {

struct ModelFile::Storage {
  std::vector<std::unique_ptr<MappedFile>> maps;
  detail::OwnedBuffers owned{detail::memory_budget()};
  std::map<std::string, std::span<const std::byte>> external;  // ONNX external data, by path
  std::unique_ptr<ModelGraph> graph;                           // the first ONNX model's graph
};

ModelFile::ModelFile() : storage_(std::make_unique<Storage>()) {}

void ModelFile::drop_pages(const void* data, std::size_t size) const noexcept {
  for (const auto& map : storage_->maps) map->drop_pages(data, size);
}
ModelFile::ModelFile(ModelFile&&) noexcept = default;
ModelFile& ModelFile::operator=(ModelFile&&) noexcept = default;
ModelFile::~ModelFile() = default;

const ModelGraph* ModelFile::graph() const noexcept {
  return storage_->graph.get();
}

namespace detail {

void fail(const std::string& origin, const std::string& problem) {
  throw Error(origin + ": " + problem);
}

std::vector<std::byte>& OwnedBuffers::allocate(std::uint64_t bytes, const std::string& where) {
  if (bytes > budget_ - used_) {
    const auto mib = [](std::uint64_t b) { return std::to_string((b + (1 << 20) - 1) >> 20) + " MiB"; };
    fail(where, "needs " + mib(bytes) + " in memory (inflated or converted data), which with the " +
                    mib(used_) + " already used passes tfdebug's budget of " + mib(budget_) +
                    " (set TFDEBUG_MEMORY_BUDGET_MB to change it)");
  }
  used_ += bytes;
  return buffers_.emplace_back(static_cast<std::size_t>(bytes));
}

std::uint64_t memory_budget() {
  const char* text = std::getenv("TFDEBUG_MEMORY_BUDGET_MB");
  if (text == nullptr || *text == '\0') return OwnedBuffers::kDefaultBudget;
  char* end = nullptr;
  const unsigned long long mb = std::strtoull(text, &end, 10);
  if (*end != '\0' || mb == 0 || mb > (std::uint64_t{1} << 40)) {
    throw Error("TFDEBUG_MEMORY_BUDGET_MB=" + escape_text(text) +
                ": expected a whole number of MiB, 1 or more");
  }
  return static_cast<std::uint64_t>(mb) << 20;
}

Format sniff(std::span<const std::byte> bytes) {
  static constexpr unsigned char kNpy[] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
  if (bytes.size() >= 6 && std::memcmp(bytes.data(), kNpy, 6) == 0) return Format::npy;
  if (bytes.size() >= 4 &&
      (std::memcmp(bytes.data(), "PK\x03\x04", 4) == 0 || std::memcmp(bytes.data(), "PK\x05\x06", 4) == 0)) {
    return is_pytorch_zip(bytes) ? Format::pytorch : Format::npz;
  }
  if (bytes.size() >= 4 && std::memcmp(bytes.data(), "GGUF", 4) == 0) return Format::gguf;
  if (is_onnx(bytes)) return Format::onnx;
  if (bytes.size() >= 9 && static_cast<char>(bytes[8]) == '{') return Format::safetensors;
  // A JSON document with a weight_map: a sharded safetensors index.
  std::size_t i = 0;
  while (i < bytes.size() && std::isspace(static_cast<unsigned char>(bytes[i]))) ++i;
  if (i < bytes.size() && static_cast<char>(bytes[i]) == '{') {
    const std::string_view text(reinterpret_cast<const char*>(bytes.data()),
                                std::min<std::size_t>(bytes.size(), 1 << 20));
    if (text.find("\"weight_map\"") != std::string_view::npos) return Format::safetensors_index;
  }
  return Format::unknown;
}

}  // namespace detail

namespace {

namespace fs = std::filesystem;

// Note [Contained paths]: a model may name other files (ONNX external data, the shards of an
// index), and a folder may hold symlinks. Each is opened only when, with every symlink resolved,
// it lies inside the folder the model was opened from, so a file cannot make tfdebug read
// /etc/shadow or a user's key through "weights.bin -> /home/u/.ssh/id_ed25519". One exception
// keeps the Hugging Face hub cache working: in .../models--org--name/snapshots/<revision>/ every
// file is a symlink to ../../blobs/<hash>, so under a "snapshots" folder the root is the
// repository's cache folder above it. A symlink loop is reported as one.
fs::path containment_root(const fs::path& folder) {
  std::error_code ec;
  fs::path root = fs::canonical(folder.empty() ? fs::path(".") : folder, ec);
  if (ec) return fs::absolute(folder).lexically_normal();
  for (fs::path p = root; p.has_relative_path(); p = p.parent_path()) {
    if (p.parent_path().filename() == "snapshots") return p.parent_path().parent_path();
  }
  return root;
}

bool is_inside(const fs::path& file, const fs::path& root) {
  const auto [end, _] = std::mismatch(root.begin(), root.end(), file.begin(), file.end());
  return end == root.end();
}

// `file` with its symlinks resolved, when it lies inside `root`; throws naming `what` otherwise.
// A missing file is returned as named (opening it reports that).
fs::path contained(const fs::path& file, const fs::path& root, const std::string& what) {
  std::error_code ec;
  fs::path real = fs::canonical(file, ec);
  if (ec == std::errc::too_many_symbolic_link_levels) {
    throw Error(file.string() + ": a symlink loop (" + what + ")");
  }
  if (ec) return file;
  if (!is_inside(real, root)) {
    throw Error(file.string() + ": " + what + " resolves to " + detail::quote(real.string(), 200) +
                ", outside the model's folder " + detail::quote(root.string(), 200) +
                "; tfdebug reads only files inside it");
  }
  return real;
}

const char* describe_unknown(std::span<const std::byte> bytes) {
  // torch.save before PyTorch 1.6 (or with _use_new_zipfile_serialization=False): a pickle
  // (protocol 2) that starts with LONG1 of torch's magic number 0x1950a86a20f9469cfc6c.
  static constexpr unsigned char kLegacyTorch[] = {0x80, 0x02, 0x8a, 0x0a, 0x6c, 0xfc, 0x9c,
                                                   0x46, 0xf9, 0x20, 0x6a, 0xa8, 0x50, 0x19};
  if (bytes.size() >= sizeof kLegacyTorch &&
      std::memcmp(bytes.data(), kLegacyTorch, sizeof kLegacyTorch) == 0) {
    return "a legacy PyTorch checkpoint (torch.save before 1.6, or _use_new_zipfile_serialization=False), "
           "which tfdebug does not read; re-save it with torch.save in PyTorch >= 1.6";
  }
  return "not a format tfdebug recognises (it reads safetensors, sharded safetensors indexes, GGUF, .npy, "
         ".npz, "
         "PyTorch torch.save files and ONNX)";
}

class Builder {
 public:
  explicit Builder(ModelFile::Storage& storage) : storage_(storage) {}

  void add_file(const std::string& path, std::vector<NamedTensor>& tensors,
                std::map<std::string, std::string>& meta, std::set<std::string>& formats,
                std::vector<std::string>& files, bool from_folder) {
    auto map = std::make_unique<MappedFile>(path);
    const auto bytes = map->bytes();
    switch (detail::sniff(bytes)) {
      case detail::Format::safetensors:
        detail::read_safetensors(path, bytes, tensors, meta);
        formats.insert("safetensors");
        break;
      case detail::Format::npy:
        detail::read_npy(path, fs::path(path).stem().string(), bytes, tensors, storage_.owned);
        formats.insert("npy");
        break;
      case detail::Format::gguf:
        detail::read_gguf(path, bytes, tensors, meta);
        formats.insert("gguf");
        break;
      case detail::Format::npz:
        detail::read_npz(path, bytes, tensors, storage_.owned);
        formats.insert("npz");
        break;
      case detail::Format::pytorch:
        detail::read_pytorch(path, bytes, tensors, meta, storage_.owned);
        formats.insert("pytorch");
        break;
      case detail::Format::safetensors_index:
        add_index(path, bytes, tensors, meta, formats, files);
        return;
      case detail::Format::onnx:
        add_onnx(path, bytes, tensors, meta);
        formats.insert("onnx");
        break;
      case detail::Format::unknown:
        if (from_folder) return;  // folders may hold other files
        // Starts like ONNX but the sniffer's scan failed: a damaged model (the reader names
        // what is wrong) or one without a graph.
        if (!detail::starts_like_onnx(bytes)) throw Error(path + ": " + describe_unknown(bytes));
        add_onnx(path, bytes, tensors, meta);
        formats.insert("onnx");
        break;
    }
    files.push_back(path);
    storage_.maps.push_back(std::move(map));
  }

  void add_onnx(const std::string& path, std::span<const std::byte> bytes, std::vector<NamedTensor>& tensors,
                std::map<std::string, std::string>& meta) {
    const fs::path folder = fs::path(path).parent_path();
    const fs::path root = containment_root(folder);
    // Each external file is mapped once, however many tensors it holds.
    const detail::ExternalData external = [&](const std::string& location) {
      const std::string file =
          contained((folder / location).lexically_normal(), root, "external data of " + path).string();
      const auto it = storage_.external.find(file);
      if (it != storage_.external.end()) return it->second;
      auto map = std::make_unique<MappedFile>(file);
      const std::span<const std::byte> mapped = map->bytes();
      storage_.maps.push_back(std::move(map));
      storage_.external.emplace(file, mapped);
      return mapped;
    };
    auto graph = std::make_unique<ModelGraph>();
    detail::read_onnx(path, bytes, external, tensors, meta, storage_.owned, *graph);
    if (!storage_.graph) storage_.graph = std::move(graph);
  }

  void add_index(const std::string& path, std::span<const std::byte> bytes, std::vector<NamedTensor>& tensors,
                 std::map<std::string, std::string>& meta, std::set<std::string>& formats,
                 std::vector<std::string>& files) {
    // Nesting is bounded (an index needs 3 levels) so that nothing recurses over an attacker's
    // depth, and the parser's message loses its echo of the input (Note [Quoted input]).
    constexpr int kMaxIndexDepth = 16;
    const nlohmann::json::parser_callback_t bounded = [&](int depth, nlohmann::json::parse_event_t event,
                                                          nlohmann::json& /*parsed*/) {
      if ((event == nlohmann::json::parse_event_t::object_start ||
           event == nlohmann::json::parse_event_t::array_start) &&
          depth >= kMaxIndexDepth) {
        throw Error(path + ": index nests arrays or objects deeper than " + std::to_string(kMaxIndexDepth) +
                    " levels");
      }
      return true;
    };
    nlohmann::json index;
    try {
      index = nlohmann::json::parse(reinterpret_cast<const char*>(bytes.data()),
                                    reinterpret_cast<const char*>(bytes.data()) + bytes.size(), bounded);
    } catch (const nlohmann::json::exception& e) {
      std::string reason = e.what();
      reason.resize(std::min(reason.find("; last read"), reason.size()));
      throw Error(path + ": index is not valid JSON: " + detail::escape_text(reason, 160));
    }
    if (!index.is_object() || !index.contains("weight_map") || !index["weight_map"].is_object()) {
      throw Error(path + ": a safetensors index needs a \"weight_map\" object");
    }
    if (index.contains("metadata") && index["metadata"].is_object()) {
      for (const auto& [k, v] : index["metadata"].items())
        meta[k] = v.is_string() ? v.get<std::string>() : v.dump();
    }
    std::map<std::string, std::string> expected;  // tensor -> shard
    std::vector<std::string> shards;
    for (const auto& [name, shard] : index["weight_map"].items()) {
      if (!shard.is_string())
        throw Error(path + ": weight_map entry " + detail::quote(name) + " must name a file");
      const std::string file = shard.get<std::string>();
      if (file.find("..") != std::string::npos || fs::path(file).is_absolute()) {
        throw Error(path + ": weight_map entry " + detail::quote(name) +
                    " points outside the index's folder: " + detail::quote(file));
      }
      expected[name] = file;
      if (std::find(shards.begin(), shards.end(), file) == shards.end()) shards.push_back(file);
    }
    const fs::path folder = fs::path(path).parent_path();
    const fs::path root = containment_root(folder);
    const std::size_t before = tensors.size();
    for (const std::string& shard : shards) {
      const std::string shard_path = (folder / shard).string();
      (void)contained(shard_path, root, "a shard listed in " + path);
      auto map = std::make_unique<MappedFile>(shard_path);
      // Hugging Face indexes list safetensors shards, or PyTorch ones (pytorch_model.bin.index.json).
      const detail::Format shard_format = detail::sniff(map->bytes());
      if (shard_format == detail::Format::safetensors) {
        detail::read_safetensors(shard_path, map->bytes(), tensors, meta);
        formats.insert("safetensors");
      } else if (shard_format == detail::Format::pytorch) {
        detail::read_pytorch(shard_path, map->bytes(), tensors, meta, storage_.owned);
        formats.insert("pytorch");
      } else {
        throw Error(shard_path + ": listed in " + path + " but not a safetensors or PyTorch file");
      }
      files.push_back(shard_path);
      storage_.maps.push_back(std::move(map));
    }
    std::set<std::string> found;
    for (std::size_t i = before; i < tensors.size(); ++i) {
      const auto it = expected.find(tensors[i].name);
      if (it == expected.end()) {
        throw Error(tensors[i].file + ": tensor " + detail::quote(tensors[i].name) + " is not in the index " +
                    path);
      }
      if (fs::path(tensors[i].file).filename() != fs::path(it->second).filename()) {
        throw Error(path + ": the index places " + detail::quote(tensors[i].name) + " in " +
                    detail::quote(it->second) + ", but it is in " + tensors[i].file);
      }
      found.insert(tensors[i].name);
    }
    for (const auto& [name, shard] : expected) {
      if (!found.contains(name)) {
        throw Error(path + ": tensor " + detail::quote(name) + " is missing from " + detail::quote(shard));
      }
    }
  }

 private:
  ModelFile::Storage& storage_;
};

}  // namespace

ModelFile ModelFile::open(const std::string& path) {
  ModelFile model;
  Builder builder(*model.storage_);
  std::set<std::string> formats;
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    std::vector<std::string> entries;
    bool has_index = false;
    bool has_safetensors = false;
    bool has_torch_index = false;
    const fs::path root = containment_root(path);
    std::error_code walk_error;
    for (auto it = fs::directory_iterator(path, walk_error); !walk_error && it != fs::directory_iterator();
         it.increment(walk_error)) {
      const fs::directory_entry& entry = *it;
      // Note [Contained paths]: a symlink is followed only inside the folder; one to nothing, a
      // folder or a special file is not a model file, and is passed over like any other.
      if (entry.is_symlink(ec)) (void)contained(entry.path(), root, "a symlink in " + path);
      if (!entry.is_regular_file(ec)) continue;
      const std::string& name = entries.emplace_back(entry.path().string());
      if (name.ends_with(".safetensors.index.json")) has_index = true;
      if (name.ends_with(".safetensors")) has_safetensors = true;
      if (name.ends_with(".bin.index.json")) has_torch_index = true;
    }
    if (walk_error) throw Error(path + ": cannot list the folder: " + walk_error.message());
    std::sort(entries.begin(), entries.end());
    for (const std::string& file : entries) {
      // With an index, its shards are read through it (and checked against it).
      if (has_index && file.ends_with(".safetensors")) continue;
      if (has_torch_index && file.ends_with(".bin")) continue;
      // Hugging Face repositories often hold the same weights twice, as safetensors and as
      // PyTorch files: then only the safetensors are read.
      const bool torch_weights = file.ends_with(".bin") || file.ends_with(".bin.index.json") ||
                                 file.ends_with(".pt") || file.ends_with(".pth");
      if ((has_index || has_safetensors) && torch_weights) continue;
      builder.add_file(file, model.tensors_, model.metadata_, formats, model.files_, true);
    }
    if (model.tensors_.empty() && model.files_.empty()) {
      throw Error(path + ": the folder holds no safetensors, .npy or .npz file");
    }
  } else if (fs::exists(path, ec)) {
    builder.add_file(path, model.tensors_, model.metadata_, formats, model.files_, false);
  } else {
    throw Error(path + ": no such file or folder");
  }
  for (const std::string& f : formats) model.format_ += (model.format_.empty() ? "" : "+") + f;
  return model;
}

}  // namespace tfdebug::io
