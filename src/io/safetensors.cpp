// safetensors: u64 LE header length N, N bytes of JSON, then the tensor bytes.
// Validation follows the format's own rules (../shared/reference/formats.md): N <= 100,000,000;
// the header is a JSON object with unique keys; every tensor's [begin, end) lies in the data,
// matches numel * element size, and, sorted by begin, the tensors tile the data exactly (no gaps,
// no overlaps, no trailing bytes).
#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>
#include <unordered_set>

#include "quote.hpp"
#include "readers.hpp"
#include "tfdebug/core/error.hpp"

namespace tfdebug::io::detail {
namespace {

constexpr std::uint64_t kMaxHeader = 100'000'000;

struct DTypeName {
  const char* name;
  DType dtype;
};
constexpr DTypeName kDTypes[] = {
    {"F64", DType::f64},           {"F32", DType::f32},         {"F16", DType::f16}, {"BF16", DType::bf16},
    {"F8_E4M3", DType::f8_e4m3fn}, {"F8_E5M2", DType::f8_e5m2}, {"I8", DType::i8},   {"I16", DType::i16},
    {"I32", DType::i32},           {"I64", DType::i64},         {"U8", DType::u8},   {"BOOL", DType::boolean},
};

DType parse_dtype_name(const std::string& origin, const std::string& tensor, const std::string& name) {
  for (const DTypeName& d : kDTypes) {
    if (name == d.name) return d.dtype;
  }
  fail(origin, "tensor " + quote(tensor) + " has dtype " + quote(name) +
                   ", which tfdebug does not read (it reads F64 F32 F16 BF16 F8_E4M3 F8_E5M2 I8 I16 I32 "
                   "I64 U8 BOOL)");
}

// Note [Header by SAX]: the header is read by a SAX handler that keeps only what a tensor
// entry holds, in file order. Parsing into a DOM and looking keys up is quadratic in an
// ordered object (200,000 tensors took over 20 s), and an error that serialises the attacker's
// value (a shape nested 100,000 arrays deep) recursed off the stack. Here nesting is bounded
// (kMaxDepth; a header needs 3), every step is constant time, and errors describe values by kind
// and quote names through quote() (Note [Quoted input]).
constexpr int kMaxDepth = 16;

struct Entry {
  std::string name;
  std::string dtype;
  bool has_dtype = false;
  bool has_shape = false;
  bool has_offsets = false;
  std::vector<std::uint64_t> shape, offsets;
};

class HeaderReader {
 public:
  explicit HeaderReader(const std::string& origin) : origin_(origin) {}

  std::vector<Entry> entries;
  std::map<std::string, std::string> metadata;

  bool null() { return misplaced("null", depth_); }
  bool boolean(bool /*unused*/) { return misplaced("a boolean", depth_); }
  bool number_integer(std::int64_t /*unused*/) { return misplaced("a negative integer", depth_); }
  bool number_float(double /*unused*/, const std::string& /*unused*/) {
    return misplaced("a fraction", depth_);
  }
  bool binary(nlohmann::json::binary_t& /*unused*/) { return misplaced("binary data", depth_); }

  bool number_unsigned(std::uint64_t v) {
    if (skip_ > 0 || depth_ != 3 || !in_list()) return misplaced("a number", depth_);
    std::vector<std::uint64_t>& list = field_ == Field::shape ? current().shape : current().offsets;
    if (field_ == Field::shape && list.size() == static_cast<std::size_t>(kMaxRank)) {
      fail(origin_,
           what() + ": shape must be an array of at most " + std::to_string(kMaxRank) + " dimensions");
    }
    if (field_ == Field::offsets && list.size() == 2)
      fail(origin_, what() + ": data_offsets must be [begin, end]");
    if (v > static_cast<std::uint64_t>(INT64_MAX)) {
      fail(origin_, what() + ": " + field_name() + " value " + std::to_string(v) + " is too large");
    }
    list.push_back(v);
    return true;
  }

  bool string(std::string& v) {
    if (skip_ == 0 && depth_ == 2 && in_metadata_) {
      metadata[key_] = std::move(v);
      return true;
    }
    if (skip_ == 0 && depth_ == 2 && field_ == Field::dtype) {
      current().dtype = std::move(v);
      return true;
    }
    return misplaced("a string", depth_);
  }

  bool start_object(std::size_t /*unused*/) {
    enter();
    if (skip_ > 0) return true;
    if (depth_ == 1) return true;
    if (depth_ == 2 && key_ == "__metadata__") {
      in_metadata_ = true;
      return true;
    }
    if (depth_ == 2) {
      entries.push_back({});
      entries.back().name = key_;
      return true;
    }
    return misplaced("an object", depth_ - 1);
  }

  bool start_array(std::size_t /*unused*/) {
    enter();
    if (skip_ > 0) return true;
    if (depth_ == 3 && in_list()) return true;
    return misplaced("an array", depth_ - 1);
  }

  bool end_object() { return leave(); }
  bool end_array() { return leave(); }

  bool key(std::string& k) {
    if (skip_ > 0) return true;
    if (depth_ == 1) {
      if (!seen_.insert(k).second) fail(origin_, "header names " + quote(k) + " twice");
      key_ = std::move(k);
    } else if (in_metadata_) {
      key_ = std::move(k);
    } else {
      field_ = k == "dtype"          ? Field::dtype
               : k == "shape"        ? Field::shape
               : k == "data_offsets" ? Field::offsets
                                     : Field::other;
      if (field_ != Field::other) {
        bool& has = field_ == Field::dtype   ? current().has_dtype
                    : field_ == Field::shape ? current().has_shape
                                             : current().has_offsets;
        if (has) fail(origin_, what() + " names " + field_name() + " twice");
        has = true;
      }
    }
    return true;
  }

  bool parse_error(std::size_t position, const std::string& /*last_token*/,
                   const nlohmann::json::exception& e) {
    // e.what() ends with the last token read, which the file chose: report the position instead.
    std::string reason = e.what();
    const std::size_t cut = reason.find("; last read");
    if (cut != std::string::npos) reason.resize(cut);
    fail(origin_, "header is not valid JSON at byte " + std::to_string(position) +
                      " of the header: " + escape_text(reason, 160));
  }

 private:
  enum class Field { none, dtype, shape, offsets, other };

  Entry& current() { return entries.back(); }
  bool in_list() const { return !in_metadata_ && (field_ == Field::shape || field_ == Field::offsets); }
  std::string what() const { return "tensor " + quote(entries.empty() ? key_ : entries.back().name); }
  std::string field_name() const {
    return field_ == Field::shape ? "shape" : field_ == Field::offsets ? "data_offsets" : "dtype";
  }

  void enter() {
    if (++depth_ > kMaxDepth) {
      fail(origin_, "header nests arrays or objects deeper than " + std::to_string(kMaxDepth) +
                        " levels (a safetensors header needs 3)");
    }
    if (skip_ > 0) ++skip_;
  }

  bool leave() {
    if (skip_ > 0) {
      --skip_;
    } else if (depth_ == 2) {
      in_metadata_ = false;
      field_ = Field::none;
    }
    --depth_;
    return true;
  }

  // A value of `kind` at nesting `level` (0: the header itself, 1: a tensor entry, 2: a field of
  // one, 3: an element of shape or data_offsets) that is not what its place holds: an error,
  // except in the value of a field the format does not define, which is skipped.
  bool misplaced(const char* kind, int level) {
    if (skip_ > 0) return true;
    if (level == 2 && !in_metadata_ && field_ == Field::other) {
      if (depth_ > level) skip_ = 1;  // a container: skip what it holds
      return true;
    }
    if (level == 0) fail(origin_, std::string("header must be a JSON object, got ") + kind);
    if (level == 1 && key_ == "__metadata__") fail(origin_, "__metadata__ must be an object of strings");
    if (level == 1) fail(origin_, what() + " must be an object with dtype, shape and data_offsets");
    if (in_metadata_)
      fail(origin_, "__metadata__ value of " + quote(key_) + " must be a string, got " + kind);
    if (level == 2 && field_ == Field::dtype) fail(origin_, what() + ": dtype must be a string, got " + kind);
    if (level == 2) {
      fail(origin_, what() + ": " + field_name() + " must be an array of non-negative integers, got " + kind);
    }
    fail(origin_, what() + ": " + field_name() + " holds " + kind + ", not a non-negative integer");
  }

  const std::string& origin_;
  int depth_ = 0;
  int skip_ = 0;  // > 0 inside the value of a field the format does not define
  bool in_metadata_ = false;
  Field field_ = Field::none;
  std::string key_;
  std::unordered_set<std::string> seen_;
};

struct Range {
  std::uint64_t begin, end;
  std::size_t entry;
};

}  // namespace

void read_safetensors(const std::string& origin, std::span<const std::byte> bytes,
                      std::vector<NamedTensor>& out, std::map<std::string, std::string>& metadata) {
  if (bytes.size() < 8) {
    fail(origin, "truncated: " + std::to_string(bytes.size()) +
                     " bytes, but a safetensors file starts with an 8-byte header length");
  }
  std::uint64_t header_size = 0;
  for (int i = 7; i >= 0; --i)
    header_size = (header_size << 8) | static_cast<std::uint8_t>(bytes[std::size_t(i)]);
  if (header_size > kMaxHeader) {
    fail(origin, "header length " + std::to_string(header_size) + " exceeds the format's limit of 100000000");
  }
  if (8 + header_size > bytes.size()) {
    fail(origin, "header length " + std::to_string(header_size) + " runs past the end of the file (" +
                     std::to_string(bytes.size()) + " bytes)");
  }
  const auto* header_begin = reinterpret_cast<const char*>(bytes.data() + 8);
  const std::string_view header(header_begin, header_size);

  HeaderReader reader(origin);
  nlohmann::json::sax_parse(header.begin(), header.end(), &reader);

  const std::span<const std::byte> data = bytes.subspan(8 + header_size);
  std::vector<Range> ranges;
  ranges.reserve(reader.entries.size());
  out.reserve(out.size() + reader.entries.size());
  for (std::size_t i = 0; i < reader.entries.size(); ++i) {
    const Entry& e = reader.entries[i];
    const auto what = [&e] { return "tensor " + quote(e.name); };
    if (!e.has_dtype || !e.has_shape || !e.has_offsets) {
      fail(origin, what() + " must be an object with dtype, shape and data_offsets");
    }
    const DType dtype = parse_dtype_name(origin, e.name, e.dtype);
    if (e.offsets.size() != 2) fail(origin, what() + ": data_offsets must be [begin, end]");
    std::vector<std::int64_t> shape(e.shape.begin(), e.shape.end());
    const std::uint64_t begin = e.offsets[0];
    const std::uint64_t end = e.offsets[1];
    const std::int64_t numel = checked_numel(shape, origin + ": " + what());
    std::uint64_t expected = 0;
    if (__builtin_mul_overflow(static_cast<std::uint64_t>(numel), dtype_size(dtype), &expected)) {
      fail(origin, what() + ": the byte size of its shape overflows");
    }
    if (end < begin || end - begin != expected) {
      fail(origin, what() + ": data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) +
                       "] hold " + std::to_string(end >= begin ? end - begin : 0) +
                       " bytes, but its shape and dtype need " + std::to_string(expected));
    }
    if (end > data.size()) {
      fail(origin, what() + ": data_offsets end " + std::to_string(end) + " is past the end of the data (" +
                       std::to_string(data.size()) + " bytes)");
    }
    ranges.push_back({begin, end, i});
    out.push_back({e.name, origin, TensorView(data.data() + begin, dtype, shape)});
  }
  std::sort(ranges.begin(), ranges.end(), [](const Range& a, const Range& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  std::uint64_t position = 0;
  for (const Range& r : ranges) {
    const std::string& name = reader.entries[r.entry].name;
    if (r.begin < position)
      fail(origin, "tensor " + quote(name) + " overlaps the tensor before it in the data");
    if (r.begin > position) {
      fail(origin,
           "a gap of " + std::to_string(r.begin - position) + " bytes precedes tensor " + quote(name));
    }
    position = r.end;
  }
  if (position != data.size()) {
    fail(origin, std::to_string(data.size() - position) +
                     " bytes follow the last tensor; the header accounts for " + std::to_string(position) +
                     " of " + std::to_string(data.size()));
  }
  for (auto& [key, value] : reader.metadata) metadata[key] = std::move(value);
}

}  // namespace tfdebug::io::detail
