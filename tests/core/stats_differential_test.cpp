// Every SIMD target this CPU supports against the scalar reference kernel, for every dtype, on
// random bit patterns (which include NaN, Inf and subnormals for the narrow formats), random
// values, and adversarial inputs: empty, one element, odd lengths, all NaN, all subnormal,
// +-max, mixed +-Inf, misaligned starts.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "tfdebug/core/stats.hpp"

namespace tfdebug {
namespace {

// Sums are formed in a different order per target (lane count), so they agree to rounding;
// everything else must agree exactly. `tolerance` is relative to max(|reference|, scale): 1e-12
// for exact moments; the documented f32-block bound for the default fast moments of f32-lane
// dtypes (Note [Block partials] in src/core/stats_kernel.cpp).
double g_tolerance = 1e-12;

void expect_close(double simd, double reference, double scale, const char* name) {
  if (std::isnan(reference) || std::isinf(reference)) {
    EXPECT_TRUE(std::isnan(reference) ? std::isnan(simd) : simd == reference)
        << name << ": " << simd << " vs " << reference;
    return;
  }
  const double tolerance = g_tolerance * std::max(std::fabs(reference), scale) + 1e-300;
  EXPECT_NEAR(simd, reference, tolerance) << name;
}

void expect_equal_double(double a, double b, const char* name) {
  if (std::isnan(b)) {
    EXPECT_TRUE(std::isnan(a)) << name << ": " << a;
  } else {
    EXPECT_EQ(a, b) << name;
  }
}

void compare(const Stats& s, const Stats& r) {
  EXPECT_EQ(s.count, r.count);
  EXPECT_EQ(s.nan, r.nan);
  EXPECT_EQ(s.pos_inf, r.pos_inf);
  EXPECT_EQ(s.neg_inf, r.neg_inf);
  EXPECT_EQ(s.zero, r.zero);
  EXPECT_EQ(s.subnormal, r.subnormal);
  EXPECT_EQ(s.negative, r.negative);
  EXPECT_EQ(s.positive, r.positive);
  expect_equal_double(s.min, r.min, "min");
  expect_equal_double(s.max, r.max, "max");
  expect_equal_double(s.abs_max, r.abs_max, "abs_max");
  expect_equal_double(s.min_abs_nonzero, r.min_abs_nonzero, "min_abs_nonzero");
  expect_equal_double(s.range_used, r.range_used, "range_used");
  const double scale = std::isfinite(r.abs_max) ? r.abs_max : 0.0;
  expect_close(s.mean, r.mean, scale, "mean");
  expect_close(s.variance, r.variance, scale * scale, "variance");
  expect_close(s.l1, r.l1, 0.0, "l1");
  expect_close(s.l2, r.l2, 0.0, "l2");
  ASSERT_EQ(s.target.has_value(), r.target.has_value());
  if (r.target) {
    EXPECT_EQ(s.target->overflow, r.target->overflow);
    EXPECT_EQ(s.target->underflow, r.target->underflow);
    EXPECT_EQ(s.target->subnormal, r.target->subnormal);
  }
}

struct Case {
  std::string name;
  DType dtype;
  std::vector<unsigned char> bytes;  // packed elements
};

std::vector<unsigned char> random_bits(std::size_t n_bytes, std::mt19937_64& rng) {
  std::vector<unsigned char> out(n_bytes);
  for (auto& b : out) b = static_cast<unsigned char>(rng());
  return out;
}

template <class T>
std::vector<unsigned char> pack(const std::vector<T>& values) {
  std::vector<unsigned char> out(values.size() * sizeof(T));
  std::memcpy(out.data(), values.data(), out.size());
  return out;
}

// Random finite values of moderate range, in the dtype's own encoding.
std::vector<unsigned char> random_values(DType dtype, std::size_t n, std::mt19937_64& rng) {
  std::normal_distribution<double> normal(0.25, 2.0);
  const std::size_t size = dtype_size(dtype);
  std::vector<unsigned char> out(n * size);
  for (std::size_t i = 0; i < n; ++i) {
    const double x = normal(rng);
    unsigned char* p = out.data() + i * size;
    switch (dtype) {
      case DType::f64:
        std::memcpy(p, &x, 8);
        break;
      case DType::f32: {
        const float f = static_cast<float>(x);
        std::memcpy(p, &f, 4);
        break;
      }
      case DType::bf16: {  // truncate an f32
        const float f = static_cast<float>(x);
        std::uint32_t bits;
        std::memcpy(&bits, &f, 4);
        const auto h = static_cast<std::uint16_t>(bits >> 16);
        std::memcpy(p, &h, 2);
        break;
      }
      case DType::i8: {
        const auto v = static_cast<std::int8_t>(x * 20);
        std::memcpy(p, &v, 1);
        break;
      }
      case DType::i16: {
        const auto v = static_cast<std::int16_t>(x * 3000);
        std::memcpy(p, &v, 2);
        break;
      }
      case DType::i32: {
        const auto v = static_cast<std::int32_t>(x * 1e8);
        std::memcpy(p, &v, 4);
        break;
      }
      case DType::i64: {
        const auto v = static_cast<std::int64_t>(x * 1e15);
        std::memcpy(p, &v, 8);
        break;
      }
      default: {  // f16, fp8, u8, bool: any bit pattern is a value; keep it random
        for (std::size_t b = 0; b < size; ++b) p[b] = static_cast<unsigned char>(rng());
      }
    }
  }
  return out;
}

std::vector<Case> cases_for(DType dtype) {
  std::mt19937_64 rng(1234 + static_cast<unsigned>(dtype));
  const std::size_t size = dtype_size(dtype);
  std::vector<Case> cases;
  for (std::size_t n :
       {0, 1, 2, 3, 5, 7, 15, 16, 17, 31, 33, 63, 65, 127, 1000, 16383, 16384, 16385, 40001}) {
    cases.push_back({"random bits n=" + std::to_string(n), dtype, random_bits(n * size, rng)});
    cases.push_back({"random values n=" + std::to_string(n), dtype, random_values(dtype, n, rng)});
  }
  auto repeat = [&](const char* name, auto value, std::size_t n) {
    using T = decltype(value);
    cases.push_back({name, dtype, pack(std::vector<T>(n, value))});
  };
  const std::size_t n = 1037;
  switch (dtype) {
    case DType::f64:
      repeat("all NaN", std::numeric_limits<double>::quiet_NaN(), n);
      repeat("all subnormal", 4.9e-320, n);
      cases.push_back({"+-max", dtype, pack(std::vector<double>{DBL_MAX, -DBL_MAX, DBL_MAX, 1.0, -DBL_MAX})});
      cases.push_back({"mixed inf", dtype,
                       pack(std::vector<double>{INFINITY, -INFINITY, 1.0, -INFINITY, 2.0, 0.0, -0.0})});
      break;
    case DType::f32:
      repeat("all NaN", std::numeric_limits<float>::quiet_NaN(), n);
      repeat("all subnormal", 1e-41f, n);
      cases.push_back({"+-max", dtype, pack(std::vector<float>(n, FLT_MAX))});
      cases.push_back(
          {"mixed inf", dtype,
           pack(std::vector<float>{INFINITY, -INFINITY, 1.0f, -INFINITY, 2.0f, 0.0f, -0.0f, 3.0f, 4.0f})});
      break;
    case DType::f16:
      repeat("all NaN", std::uint16_t{0x7E00}, n);
      repeat("all subnormal", std::uint16_t{0x0155}, n);
      repeat("max", std::uint16_t{0x7BFF}, n);
      cases.push_back(
          {"mixed inf", dtype,
           pack(std::vector<std::uint16_t>{0x7C00, 0xFC00, 0x3C00, 0xFC00, 0x0000, 0x8000, 0xFBFF})});
      break;
    case DType::bf16:
      repeat("all NaN", std::uint16_t{0x7FC0}, n);
      repeat("all subnormal", std::uint16_t{0x0011}, n);
      repeat("max", std::uint16_t{0xFF7F}, n);
      cases.push_back({"mixed inf", dtype, pack(std::vector<std::uint16_t>{0x7F80, 0xFF80, 0x3F80, 0x0000})});
      break;
    case DType::f8_e4m3fn:
      repeat("all NaN", std::uint8_t{0x7F}, n);
      repeat("all subnormal", std::uint8_t{0x03}, n);
      repeat("max", std::uint8_t{0xFE}, n);
      break;
    case DType::f8_e5m2:
      repeat("all NaN", std::uint8_t{0x7F}, n);
      repeat("all subnormal", std::uint8_t{0x02}, n);
      cases.push_back({"mixed inf", dtype, pack(std::vector<std::uint8_t>{0x7C, 0xFC, 0x3C, 0x7B, 0xFB})});
      break;
    case DType::i64:
      cases.push_back({"extremes", dtype, pack(std::vector<std::int64_t>{INT64_MAX, INT64_MIN, 0, -1, 1})});
      break;
    case DType::i32:
      cases.push_back({"extremes", dtype, pack(std::vector<std::int32_t>{INT32_MAX, INT32_MIN, 0, -1, 1})});
      break;
    default:
      break;
  }
  return cases;
}

class StatsDifferential : public ::testing::TestWithParam<std::string> {};

TEST_P(StatsDifferential, EveryDTypeMatchesTheScalarReference) {
  const std::string target = GetParam();
  for (DType dtype : all_dtypes()) {
    for (const Case& c : cases_for(dtype)) {
      const std::int64_t n = static_cast<std::int64_t>(c.bytes.size() / dtype_size(dtype));
      for (std::size_t offset : {0, 1, 3}) {  // misaligned starts
        SCOPED_TRACE(std::string(dtype_name(dtype)) + " " + c.name + " offset " + std::to_string(offset));
        std::vector<unsigned char> buffer(c.bytes.size() + 8);
        if (!c.bytes.empty()) std::memcpy(buffer.data() + offset, c.bytes.data(), c.bytes.size());
        const TensorView view(buffer.data() + offset, dtype, {n});
        for (std::optional<DType> fit : {std::optional<DType>{}, std::optional<DType>{DType::f16},
                                         std::optional<DType>{DType::f8_e4m3fn}}) {
          for (bool exact : {true, false}) {
            StatsOptions simd;
            simd.simd = target;
            simd.target = fit;
            simd.exact = exact;
            StatsOptions reference = simd;
            reference.simd = "reference";
            const bool f64_lanes = dtype == DType::f64 || dtype == DType::i32 || dtype == DType::i64;
            g_tolerance = exact || f64_lanes ? 1e-12 : 1e-6;
            compare(compute_stats(view, simd), compute_stats(view, reference));
          }
        }
        if (::testing::Test::HasFailure()) return;  // one clear failure beats thousands
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllSupportedTargets, StatsDifferential, ::testing::ValuesIn(simd_targets()),
                         [](const ::testing::TestParamInfo<std::string>& param_info) {
                           return param_info.param;
                         });

TEST(StatsDifferential, AtLeastOneVectorTargetIsSupported) {
  const auto targets = simd_targets();
  ASSERT_FALSE(targets.empty());
  EXPECT_EQ(targets.front(), best_simd_target());
}

}  // namespace
}  // namespace tfdebug
