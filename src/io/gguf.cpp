// GGUF v2 and v3 (ggml's model files): "GGUF", u32 version, u64 tensor count, u64 key/value
// count, the key/values, the tensor infos, zero padding to the alignment, then the data.
// Strings are a u64 length and that many bytes; every count and length is checked against the
// bytes left before anything is allocated. Tensor infos give the dimensions innermost first
// (ggml's ne[0] is the contiguous one), so shapes are reversed into numpy order.
//
// Plain tensors (F32, F16, BF16, F64, I8..I64) become views into the mapped file; block-quantised
// ones (Q4_0 ... Q6_K) become QuantizedViews that the stats kernel decodes chunk by chunk.
// Tensors in formats tfdebug cannot decode (IQ*, Q2_K, Q3_K, ...) are listed in the metadata key
// "tfdebug.undecoded" rather than failing the whole file.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <optional>
#include <set>

#include "readers.hpp"
#include "tfdebug/core/error.hpp"

namespace tfdebug::io::detail {
namespace {

constexpr std::uint64_t kMaxDims = 4;           // GGML_MAX_DIMS
constexpr std::uint64_t kMaxString = 1u << 24;  // no key, name or value is anywhere near 16 MiB
constexpr std::size_t kListedArray = 8;         // array elements shown in the metadata text

enum class ValueType : std::uint32_t {
  u8 = 0,
  i8 = 1,
  u16 = 2,
  i16 = 3,
  u32 = 4,
  i32 = 5,
  f32 = 6,
  boolean = 7,
  string = 8,
  array = 9,
  u64 = 10,
  i64 = 11,
  f64 = 12,
};
constexpr const char* kValueTypeNames[] = {"uint8",  "int8",    "uint16", "int16",  "uint32",
                                           "int32",  "float32", "bool",   "string", "array",
                                           "uint64", "int64",   "float64"};

struct GgmlType {
  std::uint32_t id;
  const char* name;
  std::optional<DType> dtype;         // read directly
  std::optional<BlockFormat> blocks;  // decoded by the stats kernel
};
// ggml_type ids (ggml.h). Ids not listed are unknown.
constexpr GgmlType kGgmlTypes[] = {
    {0, "F32", DType::f32, {}},
    {1, "F16", DType::f16, {}},
    {2, "Q4_0", {}, BlockFormat::q4_0},
    {3, "Q4_1", {}, BlockFormat::q4_1},
    {6, "Q5_0", {}, BlockFormat::q5_0},
    {7, "Q5_1", {}, BlockFormat::q5_1},
    {8, "Q8_0", {}, BlockFormat::q8_0},
    {9, "Q8_1", {}, {}},
    {10, "Q2_K", {}, {}},
    {11, "Q3_K", {}, {}},
    {12, "Q4_K", {}, BlockFormat::q4_k},
    {13, "Q5_K", {}, BlockFormat::q5_k},
    {14, "Q6_K", {}, BlockFormat::q6_k},
    {15, "Q8_K", {}, {}},
    {16, "IQ2_XXS", {}, {}},
    {17, "IQ2_XS", {}, {}},
    {18, "IQ3_XXS", {}, {}},
    {19, "IQ1_S", {}, {}},
    {20, "IQ4_NL", {}, {}},
    {21, "IQ3_S", {}, {}},
    {22, "IQ2_S", {}, {}},
    {23, "IQ4_XS", {}, {}},
    {24, "I8", DType::i8, {}},
    {25, "I16", DType::i16, {}},
    {26, "I32", DType::i32, {}},
    {27, "I64", DType::i64, {}},
    {28, "F64", DType::f64, {}},
    {29, "IQ1_M", {}, {}},
    {30, "BF16", DType::bf16, {}},
    {34, "TQ1_0", {}, {}},
    {35, "TQ2_0", {}, {}},
    {39, "MXFP4", {}, {}},
};

class Reader {
 public:
  Reader(const std::string& origin, std::span<const std::byte> bytes) : origin_(origin), bytes_(bytes) {}

  std::size_t position() const noexcept { return pos_; }
  std::size_t left() const noexcept { return bytes_.size() - pos_; }

  template <typename T>
  T scalar(const char* what) {
    need(sizeof(T), what);
    T v;
    std::memcpy(&v, bytes_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }

  std::string string(const std::string& what) {
    const auto length = scalar<std::uint64_t>(what.c_str());
    if (length > kMaxString) fail(origin_, what + " claims " + std::to_string(length) + " bytes");
    need(length, what.c_str());
    std::string s(reinterpret_cast<const char*>(bytes_.data() + pos_), static_cast<std::size_t>(length));
    pos_ += static_cast<std::size_t>(length);
    return s;
  }

  void need(std::uint64_t n, const char* what) const {
    if (n > left()) {
      fail(origin_, "truncated in " + std::string(what) + ": needs " + std::to_string(n) +
                        " bytes at offset " + std::to_string(pos_) + ", but the file has " +
                        std::to_string(left()) + " left");
    }
  }

  void skip(std::uint64_t n, const char* what) {
    need(n, what);
    pos_ += static_cast<std::size_t>(n);
  }

 private:
  const std::string& origin_;
  std::span<const std::byte> bytes_;
  std::size_t pos_ = 0;
};

std::string number_text(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.9g", v);
  return buffer;
}

const char* value_type_name(std::uint32_t type) {
  return type < std::size(kValueTypeNames) ? kValueTypeNames[type] : "unknown";
}

// A scalar value as text (strings as they are), or nullopt for strings/arrays handled elsewhere.
std::string scalar_text(Reader& r, ValueType type, const std::string& key) {
  switch (type) {
    case ValueType::u8:
      return std::to_string(r.scalar<std::uint8_t>(key.c_str()));
    case ValueType::i8:
      return std::to_string(r.scalar<std::int8_t>(key.c_str()));
    case ValueType::u16:
      return std::to_string(r.scalar<std::uint16_t>(key.c_str()));
    case ValueType::i16:
      return std::to_string(r.scalar<std::int16_t>(key.c_str()));
    case ValueType::u32:
      return std::to_string(r.scalar<std::uint32_t>(key.c_str()));
    case ValueType::i32:
      return std::to_string(r.scalar<std::int32_t>(key.c_str()));
    case ValueType::u64:
      return std::to_string(r.scalar<std::uint64_t>(key.c_str()));
    case ValueType::i64:
      return std::to_string(r.scalar<std::int64_t>(key.c_str()));
    case ValueType::f32:
      return number_text(r.scalar<float>(key.c_str()));
    case ValueType::f64:
      return number_text(r.scalar<double>(key.c_str()));
    case ValueType::boolean:
      return r.scalar<std::uint8_t>(key.c_str()) ? "true" : "false";
    case ValueType::string:
      return r.string("the value of " + key);
    case ValueType::array:
      break;
  }
  return {};
}

std::uint64_t min_value_bytes(ValueType type) {
  switch (type) {
    case ValueType::u8:
    case ValueType::i8:
    case ValueType::boolean:
      return 1;
    case ValueType::u16:
    case ValueType::i16:
      return 2;
    case ValueType::u32:
    case ValueType::i32:
    case ValueType::f32:
      return 4;
    case ValueType::u64:
    case ValueType::i64:
    case ValueType::f64:
    case ValueType::string:
      return 8;
    case ValueType::array:
      return 12;
  }
  return 1;
}

bool known_value_type(std::uint32_t t) {
  return t <= static_cast<std::uint32_t>(ValueType::f64);
}

// The value of `key` as text: arrays as "[a, b, ... (N string)]" with the first few elements.
std::string read_value(const std::string& origin, Reader& r, std::uint32_t type, const std::string& key) {
  if (!known_value_type(type)) {
    fail(origin,
         "key '" + key + "' has value type " + std::to_string(type) + ", which GGUF does not define (0-12)");
  }
  if (static_cast<ValueType>(type) != ValueType::array)
    return scalar_text(r, static_cast<ValueType>(type), key);
  const auto element = r.scalar<std::uint32_t>(key.c_str());
  const auto count = r.scalar<std::uint64_t>(key.c_str());
  if (!known_value_type(element)) {
    fail(origin,
         "array '" + key + "' has element type " + std::to_string(element) + ", which GGUF does not define");
  }
  if (static_cast<ValueType>(element) == ValueType::array) {
    fail(origin, "array '" + key + "' holds arrays; GGUF does not allow nested arrays");
  }
  const std::uint64_t least = min_value_bytes(static_cast<ValueType>(element));
  if (count > r.left() / least) {
    fail(origin, "array '" + key + "' claims " + std::to_string(count) + " " + value_type_name(element) +
                     " elements, more than the " + std::to_string(r.left()) + " bytes left can hold");
  }
  std::string text = "[";
  for (std::uint64_t i = 0; i < count; ++i) {
    std::string v = scalar_text(r, static_cast<ValueType>(element), key);
    if (i < kListedArray) text += (i ? ", " : "") + v;
  }
  if (count > kListedArray) {
    text += ", ... (" + std::to_string(count) + " " + value_type_name(element) + ")";
  }
  return text + "]";
}

const GgmlType* find_type(std::uint32_t id) {
  for (const GgmlType& t : kGgmlTypes) {
    if (t.id == id) return &t;
  }
  return nullptr;
}

struct Info {
  std::string name;
  std::vector<std::int64_t> shape;  // numpy order
  const GgmlType* type;
  std::uint64_t offset;
  std::uint64_t size;
};

}  // namespace

void read_gguf(const std::string& origin, std::span<const std::byte> bytes, std::vector<NamedTensor>& out,
               std::map<std::string, std::string>& metadata) {
  Reader r(origin, bytes);
  r.need(24, "the header (magic, version, tensor and key/value counts)");
  if (std::memcmp(bytes.data(), "GGUF", 4) != 0) fail(origin, "not a GGUF file: the magic is not \"GGUF\"");
  r.skip(4, "magic");
  const auto version = r.scalar<std::uint32_t>("version");
  if (version != 2 && version != 3) {
    if (__builtin_bswap32(version) == 2 || __builtin_bswap32(version) == 3) {
      fail(origin, "a big-endian GGUF file; tfdebug reads little-endian GGUF v2 and v3");
    }
    fail(origin, "GGUF version " + std::to_string(version) + "; tfdebug reads versions 2 and 3");
  }
  const auto tensor_count = r.scalar<std::uint64_t>("tensor count");
  const auto kv_count = r.scalar<std::uint64_t>("key/value count");
  // A key/value takes at least 8 + 4 + 1 bytes, a tensor info at least 8 + 4 + 4 + 8.
  if (kv_count > r.left() / 13) {
    fail(origin, "header claims " + std::to_string(kv_count) + " key/values, more than the file can hold");
  }
  if (tensor_count > r.left() / 24) {
    fail(origin, "header claims " + std::to_string(tensor_count) + " tensors, more than the file can hold");
  }

  std::set<std::string> keys;
  std::uint64_t alignment = 32;
  metadata["gguf.version"] = std::to_string(version);
  for (std::uint64_t i = 0; i < kv_count; ++i) {
    const std::string key = r.string("key " + std::to_string(i));
    if (!keys.insert(key).second) fail(origin, "key '" + key + "' appears twice");
    const auto type = r.scalar<std::uint32_t>(("the type of key '" + key + "'").c_str());
    if (key == "general.alignment") {
      if (type != static_cast<std::uint32_t>(ValueType::u32)) {
        fail(origin, "general.alignment must be a uint32, not " + std::string(value_type_name(type)));
      }
      alignment = r.scalar<std::uint32_t>("general.alignment");
      if (alignment == 0 || !std::has_single_bit(alignment)) {
        fail(origin, "general.alignment is " + std::to_string(alignment) + "; it must be a power of two");
      }
      metadata[key] = std::to_string(alignment);
      continue;
    }
    metadata[key] = read_value(origin, r, type, key);
  }

  std::vector<Info> infos;
  infos.reserve(static_cast<std::size_t>(tensor_count));
  std::set<std::string> names;
  for (std::uint64_t i = 0; i < tensor_count; ++i) {
    Info info;
    info.name = r.string("the name of tensor " + std::to_string(i));
    if (!names.insert(info.name).second) fail(origin, "tensor '" + info.name + "' appears twice");
    const auto n_dims = r.scalar<std::uint32_t>(info.name.c_str());
    if (n_dims > kMaxDims) {
      fail(origin,
           "tensor '" + info.name + "' has " + std::to_string(n_dims) + " dimensions; GGUF allows at most 4");
    }
    std::vector<std::int64_t> ne(n_dims);
    for (auto& d : ne) {
      const auto v = r.scalar<std::uint64_t>(info.name.c_str());
      if (v > static_cast<std::uint64_t>(INT64_MAX)) {
        fail(origin,
             "tensor '" + info.name + "' has dimension " + std::to_string(v) + ", which is too large");
      }
      d = static_cast<std::int64_t>(v);
    }
    info.shape.assign(ne.rbegin(), ne.rend());
    const auto type_id = r.scalar<std::uint32_t>(info.name.c_str());
    info.type = find_type(type_id);
    if (info.type == nullptr) {
      fail(origin, "tensor '" + info.name + "' has ggml type " + std::to_string(type_id) +
                       ", which tfdebug does not know");
    }
    info.offset = r.scalar<std::uint64_t>(info.name.c_str());
    if (info.offset % alignment != 0) {
      fail(origin, "tensor '" + info.name + "' starts at data offset " + std::to_string(info.offset) +
                       ", which is not a multiple of the alignment " + std::to_string(alignment));
    }
    const std::int64_t numel = checked_numel(info.shape, origin + ": tensor '" + info.name + "'");
    if (info.type->dtype) {
      const std::uint64_t elem = dtype_info(*info.type->dtype).size;
      if (static_cast<std::uint64_t>(numel) > UINT64_MAX / elem)
        fail(origin, "tensor '" + info.name + "' is too large");
      info.size = static_cast<std::uint64_t>(numel) * elem;
    } else if (info.type->blocks) {
      const BlockFormatInfo& b = block_format_info(*info.type->blocks);
      if (ne.empty() || ne[0] % b.block_elements != 0) {
        fail(origin, "tensor '" + info.name + "' is " + info.type->name +
                         ", whose rows must be a multiple of " + std::to_string(b.block_elements) +
                         " values, but its innermost dimension is " +
                         (ne.empty() ? std::string("missing") : std::to_string(ne[0])));
      }
      info.size =
          static_cast<std::uint64_t>(numel / b.block_elements) * static_cast<std::uint64_t>(b.block_bytes);
    } else {
      info.size = 0;  // undecoded: its bytes are not checked beyond its offset
    }
    infos.push_back(std::move(info));
  }

  const std::uint64_t data_start = (r.position() + alignment - 1) / alignment * alignment;
  if (data_start > bytes.size() && !infos.empty()) {
    fail(origin, "truncated: the tensor data would start at offset " + std::to_string(data_start) +
                     ", past the end of the file (" + std::to_string(bytes.size()) + " bytes)");
  }
  const std::uint64_t data_size = infos.empty() ? 0 : bytes.size() - data_start;
  std::vector<const Info*> by_offset;
  for (const Info& info : infos) {
    if (info.offset > data_size || info.size > data_size - info.offset) {
      fail(origin, "tensor '" + info.name + "' needs bytes [" + std::to_string(info.offset) + ", " +
                       std::to_string(info.offset + info.size) + ") of the data, which has " +
                       std::to_string(data_size));
    }
    by_offset.push_back(&info);
  }
  std::sort(by_offset.begin(), by_offset.end(),
            [](const Info* a, const Info* b) { return a->offset < b->offset; });
  for (std::size_t i = 1; i < by_offset.size(); ++i) {
    const Info& prev = *by_offset[i - 1];
    if (prev.size > 0 && by_offset[i]->offset < prev.offset + prev.size) {
      fail(origin, "tensors '" + prev.name + "' and '" + by_offset[i]->name + "' overlap in the data");
    }
  }

  std::string undecoded;
  for (const Info& info : infos) {
    const std::byte* data = bytes.data() + data_start + info.offset;
    NamedTensor t;
    t.name = info.name;
    t.file = origin;
    if (info.type->dtype) {
      t.view = TensorView(data, *info.type->dtype, info.shape);
    } else if (info.type->blocks) {
      t.quantized = QuantizedView{*info.type->blocks, data, info.shape};
    } else {
      undecoded += (undecoded.empty() ? "" : ", ") + info.name + " (" + info.type->name + ")";
      continue;
    }
    out.push_back(std::move(t));
  }
  if (!undecoded.empty()) metadata["tfdebug.undecoded"] = undecoded;
}

}  // namespace tfdebug::io::detail
