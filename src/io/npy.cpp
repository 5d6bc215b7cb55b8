// NumPy .npy: "\x93NUMPY", version, header length (u16 in 1.0, u32 in 2.0/3.0), a Python dict
// literal {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }, then the data.
// Only the dict is parsed (never the padding); object arrays (pickles) are refused.
#include <algorithm>
#include <cctype>
#include <cstring>

#include "readers.hpp"
#include "tfdebug/core/error.hpp"

namespace tfdebug::io::detail {
namespace {

// A tiny reader for the Python literals numpy writes: strings, True/False, tuples of ints.
class DictParser {
 public:
  DictParser(const std::string& origin, std::string_view text) : origin_(origin), text_(text) {}

  void expect(char c) {
    skip_space();
    if (pos_ >= text_.size() || text_[pos_] != c) {
      fail(origin_, std::string("header dict: expected '") + c + "' at offset " + std::to_string(pos_));
    }
    ++pos_;
  }
  bool peek(char c) {
    skip_space();
    return pos_ < text_.size() && text_[pos_] == c;
  }
  std::string string() {
    skip_space();
    if (pos_ >= text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"')) {
      fail(origin_, "header dict: expected a quoted string at offset " + std::to_string(pos_));
    }
    const char quote = text_[pos_++];
    const std::size_t end = text_.find(quote, pos_);
    if (end == std::string_view::npos) fail(origin_, "header dict: unterminated string");
    std::string s(text_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return s;
  }
  bool boolean() {
    skip_space();
    if (text_.substr(pos_, 4) == "True") {
      pos_ += 4;
      return true;
    }
    if (text_.substr(pos_, 5) == "False") {
      pos_ += 5;
      return false;
    }
    fail(origin_, "header dict: fortran_order must be True or False");
  }
  std::vector<std::int64_t> tuple() {
    expect('(');
    std::vector<std::int64_t> values;
    while (!peek(')')) {
      skip_space();
      std::int64_t v = 0;
      bool any = false;
      while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
        if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, text_[pos_] - '0', &v)) {
          fail(origin_, "header dict: a shape dimension overflows");
        }
        ++pos_;
        any = true;
      }
      if (!any) fail(origin_, "header dict: shape must be a tuple of non-negative integers");
      if (values.size() == static_cast<std::size_t>(kMaxRank)) {
        fail(origin_, "shape has more than " + std::to_string(kMaxRank) + " dimensions");
      }
      values.push_back(v);
      if (!peek(')')) expect(',');
    }
    expect(')');
    return values;
  }

 private:
  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  const std::string& origin_;
  std::string_view text_;
  std::size_t pos_ = 0;
};

struct Descr {
  DType dtype;
  bool big_endian;
};

Descr parse_descr(const std::string& origin, const std::string& descr) {
  if (descr.size() < 2) fail(origin, "unknown descr '" + descr + "'");
  const char order = descr[0];
  const std::string type =
      (order == '<' || order == '>' || order == '|' || order == '=') ? descr.substr(1) : descr;
  if (type.front() == 'O') {
    fail(origin, "holds a NumPy object array (pickled Python objects); tfdebug does not unpickle data");
  }
  struct Known {
    const char* code;
    DType dtype;
  };
  static constexpr Known kKnown[] = {{"f8", DType::f64}, {"f4", DType::f32}, {"f2", DType::f16},
                                     {"i1", DType::i8},  {"i2", DType::i16}, {"i4", DType::i32},
                                     {"i8", DType::i64}, {"u1", DType::u8},  {"b1", DType::boolean}};
  for (const Known& k : kKnown) {
    if (type == k.code) return {k.dtype, order == '>' && dtype_size(k.dtype) > 1};
  }
  fail(origin, "descr '" + descr + "' is not a dtype tfdebug reads (f2 f4 f8 i1 i2 i4 i8 u1 b1)");
}

}  // namespace

void read_npy(const std::string& origin, const std::string& name, std::span<const std::byte> bytes,
              std::vector<NamedTensor>& out, OwnedBuffers& owned) {
  static constexpr unsigned char kMagic[] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
  if (bytes.size() < 10 || std::memcmp(bytes.data(), kMagic, 6) != 0) {
    fail(origin, "not a .npy file (no \\x93NUMPY magic)");
  }
  const auto major = static_cast<std::uint8_t>(bytes[6]);
  if (major < 1 || major > 3) fail(origin, "unsupported .npy format version " + std::to_string(major));
  std::size_t header_len = 0;
  std::size_t prefix = 10;
  if (major == 1) {
    header_len =
        static_cast<std::uint8_t>(bytes[8]) | (std::size_t{static_cast<std::uint8_t>(bytes[9])} << 8);
  } else {
    if (bytes.size() < 12) fail(origin, "truncated .npy header");
    for (int i = 11; i >= 8; --i)
      header_len = (header_len << 8) | static_cast<std::uint8_t>(bytes[std::size_t(i)]);
    prefix = 12;
  }
  if (header_len > bytes.size() - prefix) {
    fail(origin, "header length " + std::to_string(header_len) + " runs past the end of the file (" +
                     std::to_string(bytes.size()) + " bytes)");
  }
  const std::string_view header(reinterpret_cast<const char*>(bytes.data() + prefix), header_len);

  DictParser p(origin, header);
  std::string descr;
  bool fortran = false;
  std::vector<std::int64_t> shape;
  bool have_descr = false, have_order = false, have_shape = false;
  p.expect('{');
  while (!p.peek('}')) {
    const std::string key = p.string();
    p.expect(':');
    if (key == "descr") {
      if (p.peek('[')) fail(origin, "holds a structured (record) array; tfdebug reads plain numeric arrays");
      descr = p.string();
      have_descr = true;
    } else if (key == "fortran_order") {
      fortran = p.boolean();
      have_order = true;
    } else if (key == "shape") {
      shape = p.tuple();
      have_shape = true;
    } else {
      fail(origin, "header dict has an unexpected key '" + key + "'");
    }
    if (!p.peek('}')) p.expect(',');
  }
  if (!have_descr || !have_order || !have_shape) {
    fail(origin, "header dict must have the keys descr, fortran_order and shape");
  }
  const Descr d = parse_descr(origin, descr);
  const std::int64_t numel = checked_numel(shape, origin);
  const std::size_t size = dtype_size(d.dtype);
  std::size_t needed = 0;
  if (__builtin_mul_overflow(static_cast<std::size_t>(numel), size, &needed)) {
    fail(origin, "the byte size of shape overflows");
  }
  const std::size_t available = bytes.size() - prefix - header_len;
  if (needed != available) {
    fail(origin, "shape and descr '" + descr + "' need " + std::to_string(needed) +
                     " data bytes, but the file has " + std::to_string(available));
  }
  const std::byte* data = bytes.data() + prefix + header_len;
  if (d.big_endian) {  // convert once into memory we own; views must be little-endian
    std::vector<std::byte>& copy = owned.allocate(needed, origin);
    for (std::size_t i = 0; i < needed; i += size) {
      for (std::size_t b = 0; b < size; ++b) copy[i + b] = data[i + size - 1 - b];
    }
    data = copy.data();
  }
  // An empty array has no element to order, and its dims may be anything: treat it as C order
  // rather than multiply them into strides.
  if (!fortran || shape.size() < 2 || numel == 0) {
    out.push_back({name, origin, TensorView(data, d.dtype, shape)});
    return;
  }
  std::vector<std::int64_t> strides(shape.size());
  std::int64_t stride = 1;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    strides[i] = stride;
    stride *= std::max<std::int64_t>(shape[i], 1);
  }
  out.push_back({name, origin, TensorView(data, d.dtype, shape, strides)});
}

}  // namespace tfdebug::io::detail
