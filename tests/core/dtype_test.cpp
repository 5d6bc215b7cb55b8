#include "tfdebug/core/dtype.hpp"

#include <gtest/gtest.h>
#include <immintrin.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "tfdebug/core/error.hpp"

namespace tfdebug {
namespace {

// Independent reference: the value of a binary floating-point pattern straight from the
// definition (-1)^s * 2^(e - bias) * (1 + m / 2^mbits), with e == 0 meaning subnormal.
double decode_by_definition(std::uint32_t bits, int exponent_bits, int mantissa_bits, bool ieee_specials) {
  const std::uint32_t mantissa = bits & ((1u << mantissa_bits) - 1);
  const std::uint32_t exponent = (bits >> mantissa_bits) & ((1u << exponent_bits) - 1);
  const bool negative = (bits >> (mantissa_bits + exponent_bits)) & 1u;
  const int bias = (1 << (exponent_bits - 1)) - 1;
  const std::uint32_t all_ones = (1u << exponent_bits) - 1;
  double magnitude;
  if (ieee_specials && exponent == all_ones) {
    magnitude =
        mantissa == 0 ? std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
  } else if (exponent == 0) {
    magnitude = std::ldexp(static_cast<double>(mantissa), 1 - bias - mantissa_bits);
  } else {
    magnitude = std::ldexp(1.0 + std::ldexp(static_cast<double>(mantissa), -mantissa_bits),
                           static_cast<int>(exponent) - bias);
  }
  return negative ? -magnitude : magnitude;
}

void expect_same_value(double expected, float actual, std::uint32_t bits) {
  if (std::isnan(expected)) {
    EXPECT_TRUE(std::isnan(actual)) << "bits 0x" << std::hex << bits;
  } else {
    EXPECT_EQ(expected, static_cast<double>(actual)) << "bits 0x" << std::hex << bits;
    EXPECT_EQ(std::signbit(expected), std::signbit(actual)) << "bits 0x" << std::hex << bits;
  }
}

TEST(DType, F16AllPatternsMatchDefinition) {
  for (std::uint32_t bits = 0; bits < 65536; ++bits) {
    expect_same_value(decode_by_definition(bits, 5, 10, true), f16_to_f32(static_cast<std::uint16_t>(bits)),
                      bits);
  }
}

TEST(DType, F16AllPatternsMatchF16CInstruction) {
  if (!__builtin_cpu_supports("f16c")) GTEST_SKIP() << "CPU has no F16C";
  for (std::uint32_t bits = 0; bits < 65536; ++bits) {
    const float hardware = _cvtsh_ss(static_cast<unsigned short>(bits));
    const float ours = f16_to_f32(static_cast<std::uint16_t>(bits));
    if (std::isnan(hardware)) {
      EXPECT_TRUE(std::isnan(ours)) << bits;
    } else {
      EXPECT_EQ(std::bit_cast<std::uint32_t>(hardware), std::bit_cast<std::uint32_t>(ours)) << bits;
    }
  }
}

TEST(DType, BF16AllPatternsMatchDefinition) {
  for (std::uint32_t bits = 0; bits < 65536; ++bits) {
    expect_same_value(decode_by_definition(bits, 8, 7, true), bf16_to_f32(static_cast<std::uint16_t>(bits)),
                      bits);
  }
}

TEST(DType, F8E5M2AllPatternsMatchDefinition) {
  for (std::uint32_t bits = 0; bits < 256; ++bits) {
    expect_same_value(decode_by_definition(bits, 5, 2, true), f8_e5m2_to_f32(static_cast<std::uint8_t>(bits)),
                      bits);
  }
}

TEST(DType, F8E4M3FNAllPatternsMatchDefinition) {
  for (std::uint32_t bits = 0; bits < 256; ++bits) {
    // e4m3fn has no infinities: exponent 1111 holds ordinary values, except S.1111.111 = NaN.
    double expected = decode_by_definition(bits, 4, 3, false);
    if ((bits & 0x7F) == 0x7F) expected = std::numeric_limits<double>::quiet_NaN();
    expect_same_value(expected, f8_e4m3fn_to_f32(static_cast<std::uint8_t>(bits)), bits);
  }
}

TEST(DType, GoldenRanges) {
  EXPECT_EQ(dtype_info(DType::f16).max_finite, 65504.0);
  EXPECT_EQ(dtype_info(DType::f16).min_normal, 6.103515625e-05);
  EXPECT_EQ(dtype_info(DType::f16).min_subnormal, 5.960464477539063e-08);
  EXPECT_EQ(dtype_info(DType::bf16).max_finite, 3.3895313892515355e+38);
  EXPECT_EQ(dtype_info(DType::bf16).min_normal, 1.1754943508222875e-38);
  EXPECT_EQ(dtype_info(DType::f8_e4m3fn).max_finite, 448.0);
  EXPECT_EQ(dtype_info(DType::f8_e4m3fn).min_normal, 0.015625);
  EXPECT_EQ(dtype_info(DType::f8_e4m3fn).min_subnormal, 0.001953125);
  EXPECT_EQ(dtype_info(DType::f8_e5m2).max_finite, 57344.0);
  EXPECT_EQ(dtype_info(DType::f8_e5m2).min_subnormal, 1.52587890625e-05);
  EXPECT_EQ(dtype_info(DType::f32).max_finite, 3.4028234663852886e+38);
  EXPECT_EQ(dtype_info(DType::f32).min_subnormal, 1.401298464324817e-45);
  EXPECT_EQ(dtype_info(DType::i8).max_finite, 127.0);
  EXPECT_EQ(dtype_info(DType::u8).lowest, 0.0);
  // The largest finite values are the largest finite decodes of each format.
  EXPECT_EQ(f16_to_f32(0x7BFF), 65504.0f);
  EXPECT_EQ(bf16_to_f32(0x7F7F), static_cast<float>(dtype_info(DType::bf16).max_finite));
  EXPECT_EQ(f8_e4m3fn_to_f32(0x7E), 448.0f);
  EXPECT_EQ(f8_e5m2_to_f32(0x7B), 57344.0f);
  EXPECT_EQ(f8_e4m3fn_to_f32(0x01), 0.001953125f);
  EXPECT_EQ(f8_e5m2_to_f32(0x01), 1.52587890625e-05f);
}

TEST(DType, SizesAndNames) {
  EXPECT_EQ(all_dtypes().size(), static_cast<std::size_t>(kDTypeCount));
  for (DType d : all_dtypes()) {
    EXPECT_EQ(parse_dtype(dtype_name(d)), d) << dtype_name(d);
  }
  EXPECT_EQ(dtype_size(DType::f64), 8u);
  EXPECT_EQ(dtype_size(DType::bf16), 2u);
  EXPECT_EQ(dtype_size(DType::f8_e5m2), 1u);
  EXPECT_EQ(dtype_size(DType::i64), 8u);
  EXPECT_EQ(dtype_size(DType::boolean), 1u);
  EXPECT_TRUE(is_floating(DType::f8_e4m3fn));
  EXPECT_FALSE(is_floating(DType::i32));
  EXPECT_FALSE(dtype_info(DType::f8_e4m3fn).has_infinity);
}

TEST(DType, ParseAliases) {
  EXPECT_EQ(parse_dtype("float32"), DType::f32);
  EXPECT_EQ(parse_dtype("BF16"), DType::bf16);
  EXPECT_EQ(parse_dtype("fp8-e4m3"), DType::f8_e4m3fn);
  EXPECT_EQ(parse_dtype("F8_E5M2"), DType::f8_e5m2);
  EXPECT_EQ(parse_dtype("half"), DType::f16);
  EXPECT_EQ(parse_dtype("uint8"), DType::u8);
  EXPECT_EQ(parse_dtype("bool"), DType::boolean);
}

TEST(DType, ParseUnknownNamesTheInputAndTheChoices) {
  try {
    parse_dtype("float17");
    FAIL() << "expected tfdebug::Error";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("'float17'"), std::string::npos) << message;
    EXPECT_NE(message.find("bf16"), std::string::npos) << message;
  }
}

TEST(DType, LoadAsDoubleReadsUnalignedElements) {
  alignas(8) unsigned char buffer[16] = {};
  const float value = -3.5f;
  std::memcpy(buffer + 1, &value, sizeof value);
  EXPECT_EQ(load_as_double(buffer + 1, DType::f32, 0), -3.5);
  const std::int64_t big = (std::int64_t{1} << 53) + 1;
  std::memcpy(buffer + 3, &big, sizeof big);
  EXPECT_EQ(load_as_double(buffer + 3, DType::i64, 0), 9007199254740992.0);  // rounds to nearest even
  buffer[0] = 7;
  EXPECT_EQ(load_as_double(buffer, DType::boolean, 0), 1.0);
}

}  // namespace
}  // namespace tfdebug
