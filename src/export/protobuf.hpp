// Private: a protobuf wire-format encoder, written from the wire format (varint keys
// (field << 3 | wire type); 0 varint, 1 fixed64, 2 length-delimited, 5 fixed32; little-endian).
// Messages are built inside out: a nested message is encoded first, then appended with its
// length. Used for TensorBoard events; proto3 defaults (0, "") are the caller's to omit.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>

namespace tfdebug::detail {

class ProtoWriter {
 public:
  enum WireType : std::uint32_t { kVarint = 0, kFixed64 = 1, kLength = 2, kFixed32 = 5 };

  void varint(std::uint64_t v) {
    while (v >= 0x80) {
      out_.push_back(static_cast<char>((v & 0x7F) | 0x80));
      v >>= 7;
    }
    out_.push_back(static_cast<char>(v));
  }
  void key(std::uint32_t field, WireType type) { varint((std::uint64_t{field} << 3) | type); }
  // int32/int64/uint/bool/enum; negative values take 10 bytes (two's complement).
  void integer(std::uint32_t field, std::int64_t v) {
    key(field, kVarint);
    varint(static_cast<std::uint64_t>(v));
  }
  void fixed64(std::uint32_t field, double v) {
    key(field, kFixed64);
    raw(&v, 8);
  }
  void fixed32(std::uint32_t field, float v) {
    key(field, kFixed32);
    raw(&v, 4);
  }
  void bytes(std::uint32_t field, std::string_view v) {
    key(field, kLength);
    varint(v.size());
    out_.append(v);
  }
  void message(std::uint32_t field, const ProtoWriter& m) { bytes(field, m.out_); }
  void packed_doubles(std::uint32_t field, std::span<const double> v) {
    key(field, kLength);
    varint(v.size() * 8);
    raw(v.data(), v.size() * 8);
  }

  const std::string& str() const noexcept { return out_; }
  void clear() noexcept { out_.clear(); }

 private:
  void raw(const void* p, std::size_t n) { out_.append(static_cast<const char*>(p), n); }
  std::string out_;
};

}  // namespace tfdebug::detail
