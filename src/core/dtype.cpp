#include "tfdebug/core/dtype.hpp"

#include <array>
#include <bit>
#include <cctype>
#include <cstring>
#include <limits>

#include "tfdebug/core/error.hpp"

namespace tfdebug {
namespace {

// Note [Narrow float ranges]: values follow from each format's bit layout:
//   f16       max (2-2^-10)*2^15 = 65504,   min normal 2^-14,  min subnormal 2^-24
//   bf16      max (2-2^-7)*2^127,           min normal 2^-126, min subnormal 2^-133
//   f8_e4m3fn max 1.75*2^8 = 448 (1.111*2^8 is NaN), min normal 2^-6, min subnormal 2^-9
//   f8_e5m2   max 1.75*2^15 = 57344,        min normal 2^-14,  min subnormal 2^-16
constexpr std::array<DTypeInfo, kDTypeCount> kInfos = {{
    {DType::f64, "f64", 8, true, true, std::numeric_limits<double>::max(),
     std::numeric_limits<double>::lowest(), std::numeric_limits<double>::min(),
     std::numeric_limits<double>::denorm_min()},
    {DType::f32, "f32", 4, true, true, std::numeric_limits<float>::max(),
     std::numeric_limits<float>::lowest(), std::numeric_limits<float>::min(),
     std::numeric_limits<float>::denorm_min()},
    {DType::f16, "f16", 2, true, true, 65504.0, -65504.0, 0x1p-14, 0x1p-24},
    {DType::bf16, "bf16", 2, true, true, 0x1.fep127, -0x1.fep127, 0x1p-126, 0x1p-133},
    {DType::f8_e4m3fn, "f8_e4m3fn", 1, true, false, 448.0, -448.0, 0x1p-6, 0x1p-9},
    {DType::f8_e5m2, "f8_e5m2", 1, true, true, 57344.0, -57344.0, 0x1p-14, 0x1p-16},
    {DType::i8, "i8", 1, false, false, 127.0, -128.0, 1.0, 1.0},
    {DType::i16, "i16", 2, false, false, 32767.0, -32768.0, 1.0, 1.0},
    {DType::i32, "i32", 4, false, false, 2147483647.0, -2147483648.0, 1.0, 1.0},
    {DType::i64, "i64", 8, false, false, 0x1p63, -0x1p63, 1.0, 1.0},
    {DType::u8, "u8", 1, false, false, 255.0, 0.0, 1.0, 1.0},
    {DType::boolean, "bool", 1, false, false, 1.0, 0.0, 1.0, 1.0},
}};

constexpr std::array<DType, kDTypeCount> kAll = {
    DType::f64, DType::f32, DType::f16, DType::bf16, DType::f8_e4m3fn, DType::f8_e5m2,
    DType::i8,  DType::i16, DType::i32, DType::i64,  DType::u8,        DType::boolean,
};

struct Alias {
  std::string_view name;
  DType dtype;
};

// Lower-cased, with '-' and '.' folded to '_'.
constexpr std::array<Alias, 38> kAliases = {{
    {"f64", DType::f64},
    {"float64", DType::f64},
    {"double", DType::f64},
    {"f32", DType::f32},
    {"float32", DType::f32},
    {"float", DType::f32},
    {"f16", DType::f16},
    {"float16", DType::f16},
    {"half", DType::f16},
    {"fp16", DType::f16},
    {"bf16", DType::bf16},
    {"bfloat16", DType::bf16},
    {"f8_e4m3fn", DType::f8_e4m3fn},
    {"f8_e4m3", DType::f8_e4m3fn},
    {"fp8_e4m3", DType::f8_e4m3fn},
    {"fp8_e4m3fn", DType::f8_e4m3fn},
    {"e4m3", DType::f8_e4m3fn},
    {"float8_e4m3fn", DType::f8_e4m3fn},
    {"f8_e5m2", DType::f8_e5m2},
    {"fp8_e5m2", DType::f8_e5m2},
    {"e5m2", DType::f8_e5m2},
    {"float8_e5m2", DType::f8_e5m2},
    {"i8", DType::i8},
    {"int8", DType::i8},
    {"i16", DType::i16},
    {"int16", DType::i16},
    {"i32", DType::i32},
    {"int32", DType::i32},
    {"i64", DType::i64},
    {"int64", DType::i64},
    {"u8", DType::u8},
    {"uint8", DType::u8},
    {"bool", DType::boolean},
    {"boolean", DType::boolean},
    {"b8", DType::boolean},
    {"fp32", DType::f32},
    {"fp64", DType::f64},
    {"int", DType::i32},
}};

float f32_from_bits(std::uint32_t bits) noexcept {
  return std::bit_cast<float>(bits);
}

}  // namespace

const DTypeInfo& dtype_info(DType dtype) noexcept {
  return kInfos[static_cast<std::size_t>(dtype)];
}
std::string_view dtype_name(DType dtype) noexcept {
  return dtype_info(dtype).name;
}
std::size_t dtype_size(DType dtype) noexcept {
  return dtype_info(dtype).size;
}
bool is_floating(DType dtype) noexcept {
  return dtype_info(dtype).is_floating;
}
std::span<const DType> all_dtypes() noexcept {
  return kAll;
}

DType parse_dtype(std::string_view name) {
  std::string folded;
  folded.reserve(name.size());
  for (char c : name) {
    char lower = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    folded.push_back(lower == '-' || lower == '.' ? '_' : lower);
  }
  for (const Alias& alias : kAliases) {
    if (alias.name == folded) return alias.dtype;
  }
  std::string valid;
  for (DType d : kAll) {
    if (!valid.empty()) valid += ", ";
    valid += dtype_name(d);
  }
  throw Error("unknown dtype '" + std::string(name) + "': expected one of " + valid +
              " (or an alias such as float32, bfloat16, fp8-e4m3)");
}

// Note [f16 to f32]: a normal f16 keeps its mantissa and rebiases the exponent (15 -> 127);
// the all-ones exponent (Inf/NaN) maps to the all-ones f32 exponent; a subnormal
// m * 2^-24 is converted through the integer m, which is exact.
float f16_to_f32(std::uint16_t bits) noexcept {
  const std::uint32_t sign = static_cast<std::uint32_t>(bits & 0x8000u) << 16;
  const std::uint32_t exponent = (bits >> 10) & 0x1Fu;
  const std::uint32_t mantissa = bits & 0x3FFu;
  if (exponent == 0) {
    const float magnitude = static_cast<float>(mantissa) * 0x1p-24f;
    return std::bit_cast<float>(std::bit_cast<std::uint32_t>(magnitude) | sign);
  }
  if (exponent == 0x1F) return f32_from_bits(sign | 0x7F800000u | (mantissa << 13));
  return f32_from_bits(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

float bf16_to_f32(std::uint16_t bits) noexcept {
  return f32_from_bits(static_cast<std::uint32_t>(bits) << 16);
}

// Note [fp8 through f16]: both fp8 formats embed in f16 bit patterns. e5m2 is the top byte of
// an f16. For e4m3fn, placing its 7 magnitude bits at f16 bits 13..7 gives an f16 whose value
// is the fp8 value times 2^-8 (the exponents differ by bias 15 - 7), for normals and
// subnormals alike; only S.1111.111 (NaN in e4m3fn) needs a special case.
float f8_e5m2_to_f32(std::uint8_t bits) noexcept {
  return f16_to_f32(static_cast<std::uint16_t>(bits << 8));
}

float f8_e4m3fn_to_f32(std::uint8_t bits) noexcept {
  const bool negative = (bits & 0x80u) != 0;
  const std::uint8_t magnitude = bits & 0x7Fu;
  if (magnitude == 0x7F) {
    return negative ? -std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::quiet_NaN();
  }
  const auto half = static_cast<std::uint16_t>((negative ? 0x8000u : 0u) | (magnitude << 7));
  return f16_to_f32(half) * 256.0f;
}

double load_as_double(const void* data, DType dtype, std::int64_t index) noexcept {
  const auto* bytes =
      static_cast<const unsigned char*>(data) + index * static_cast<std::int64_t>(dtype_size(dtype));
  auto read = [bytes]<class T>(T*) {
    T value;
    std::memcpy(&value, bytes, sizeof(T));
    return value;
  };
  switch (dtype) {
    case DType::f64:
      return read(static_cast<double*>(nullptr));
    case DType::f32:
      return read(static_cast<float*>(nullptr));
    case DType::f16:
      return f16_to_f32(read(static_cast<std::uint16_t*>(nullptr)));
    case DType::bf16:
      return bf16_to_f32(read(static_cast<std::uint16_t*>(nullptr)));
    case DType::f8_e4m3fn:
      return f8_e4m3fn_to_f32(bytes[0]);
    case DType::f8_e5m2:
      return f8_e5m2_to_f32(bytes[0]);
    case DType::i8:
      return read(static_cast<std::int8_t*>(nullptr));
    case DType::i16:
      return read(static_cast<std::int16_t*>(nullptr));
    case DType::i32:
      return read(static_cast<std::int32_t*>(nullptr));
    case DType::i64:
      return static_cast<double>(read(static_cast<std::int64_t*>(nullptr)));
    case DType::u8:
      return bytes[0];
    case DType::boolean:
      return bytes[0] != 0 ? 1.0 : 0.0;
  }
  TFDEBUG_ASSERT(false, "load_as_double: dtype enumerator not handled");
  return 0.0;
}

}  // namespace tfdebug
