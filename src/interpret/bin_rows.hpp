// The vectorised loop of tabular LIME's row draws (Note [Rows of bin draws] in lime_bins.hpp),
// compiled once per x86-64 level (bin_rows_kernel.inc, included by bin_rows_x86_64_v4.cpp,
// bin_rows_x86_64_v3.cpp and bin_rows_baseline.cpp with their own -march), the best one the CPU
// runs picked at run time. Each copy is the same C++ with no fused multiply-adds, so every copy
// draws the same values.
#pragma once

#include <cstddef>
#include <cstdint>

// The x86-64 copies exist where the target is x86-64 (src/interpret/CMakeLists.txt adds them).
#if defined(__x86_64__)
#define TFDEBUG_BIN_ROWS_X86 1
#else
#define TFDEBUG_BIN_ROWS_X86 0
#endif

namespace tfdebug::interpret::detail {

// What a block's draw reads: QuartileBins' arrays (per bin k, per feature j) and x's bin per
// feature. The bin's truncated normal in float: Phi(lo), Phi(hi) - Phi(lo), its mean and std, and
// its training min and max (floats, exact), which the value is clamped to.
struct BinArrays {
  const std::uint64_t* threshold[3];
  const float* cdf_low[4];
  const float* cdf_width[4];
  const float* mean[4];
  const float* stdev[4];
  const float* min[4];
  const float* max[4];
  const std::int32_t* x_bins;
};

// 64 samples, whose streams start at starts[0 .. 64), features [begin, end): feature j's 64
// values to values[(j - begin) * 64 ..] (column-major), bit i of ones[j - begin] set where sample
// i drew x's bin, bit i of outer[j - begin] where its p fell in Phi's tails (the value is left
// for the caller to invert exactly).
using BinColumns = void (*)(const BinArrays& a, const std::uint64_t* starts, std::size_t begin,
                            std::size_t end, float* values, std::uint64_t* ones, std::uint64_t* outer);

// The copy for this CPU.
BinColumns bin_columns_for_cpu();

void bin_columns_baseline(const BinArrays& a, const std::uint64_t* starts, std::size_t begin, std::size_t end,
                          float* values, std::uint64_t* ones, std::uint64_t* outer);
#if TFDEBUG_BIN_ROWS_X86
void bin_columns_x86_64_v3(const BinArrays& a, const std::uint64_t* starts, std::size_t begin,
                           std::size_t end, float* values, std::uint64_t* ones, std::uint64_t* outer);
void bin_columns_x86_64_v4(const BinArrays& a, const std::uint64_t* starts, std::size_t begin,
                           std::size_t end, float* values, std::uint64_t* ones, std::uint64_t* outer);
#endif

}  // namespace tfdebug::interpret::detail
