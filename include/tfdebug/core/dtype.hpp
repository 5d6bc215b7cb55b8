// Element types of tensors, with the facts analyses need about each: size, range, and exact
// conversion of the narrow floating-point formats to f32.
//
//   using tfdebug::DType;
//   const tfdebug::DTypeInfo& f16 = tfdebug::dtype_info(DType::f16);
//   f16.max_finite;                 // 65504
//   tfdebug::f16_to_f32(0x3C00);    // 1.0f
//   tfdebug::parse_dtype("bf16");   // DType::bf16; throws tfdebug::Error for an unknown name
//
// Formats: f16 is IEEE binary16; bf16 is the top half of binary32; f8_e4m3fn has 4 exponent
// bits (bias 7), 3 mantissa bits, no infinities and one NaN pattern per sign (S.1111.111), as
// in the OCP FP8 spec and PyTorch's float8_e4m3fn; f8_e5m2 is IEEE-like (bias 15) with
// infinities and NaNs. Every conversion to f32 is exact: each value of these formats is an f32.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace tfdebug {

enum class DType : std::uint8_t {
  f64,
  f32,
  f16,
  bf16,
  f8_e4m3fn,
  f8_e5m2,
  i8,
  i16,
  i32,
  i64,
  u8,
  boolean,
};

inline constexpr int kDTypeCount = 12;

struct DTypeInfo {
  DType dtype;
  std::string_view name;  // canonical short name: "f32", "bf16", "f8_e4m3fn", "bool"
  std::size_t size;       // bytes per element
  bool is_floating;
  bool has_infinity;     // f8_e4m3fn and the integers have none
  double max_finite;     // largest finite value (for integers: the largest value)
  double lowest;         // most negative finite value
  double min_normal;     // smallest positive normal value (integers: 1)
  double min_subnormal;  // smallest positive value (integers: 1)
};

// Facts about `dtype`. Never fails.
const DTypeInfo& dtype_info(DType dtype) noexcept;
std::string_view dtype_name(DType dtype) noexcept;
std::size_t dtype_size(DType dtype) noexcept;
bool is_floating(DType dtype) noexcept;

// All dtypes, in declaration order.
std::span<const DType> all_dtypes() noexcept;

// Parses a dtype name. Accepts the canonical names and common aliases used by other tools
// ("float32", "float16", "half", "bfloat16", "fp8-e4m3", "e4m3", "fp8-e5m2", "int64", "uint8",
// "F32", "BF16", "F8_E4M3", ...). Throws tfdebug::Error naming the input and the valid names.
DType parse_dtype(std::string_view name);

// Exact conversions to f32 (every value of these formats is representable in f32).
float f16_to_f32(std::uint16_t bits) noexcept;
float bf16_to_f32(std::uint16_t bits) noexcept;
float f8_e4m3fn_to_f32(std::uint8_t bits) noexcept;
float f8_e5m2_to_f32(std::uint8_t bits) noexcept;

// Reads element `index` of a contiguous buffer of `dtype` as a double (exact for every dtype
// except i64 values beyond 2^53, which round to nearest). `data` need not be aligned.
double load_as_double(const void* data, DType dtype, std::int64_t index) noexcept;

}  // namespace tfdebug
