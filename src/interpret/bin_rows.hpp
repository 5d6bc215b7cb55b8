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

// What a row's draw reads: QuartileBins' arrays (per bin k, per feature j) and x's bin per feature.
struct BinArrays {
  const std::uint64_t* threshold[3];
  const double* cdf_low[4];
  const double* cdf_width[4];
  const double* lo[4];
  const double* hi[4];
  const double* mean[4];
  const double* stdev[4];
  const std::int32_t* x_bins;
};

// Features [begin, end) (at most 64) of the row whose stream starts at `start`: values[j - begin]
// the model input; bit (j - begin) of the result set where the draw is x's bin, of *outer where
// its probability fell in a tail of Phi (below 0.02425 or above 0.97575: the caller inverts those).
using BinBlock = std::uint64_t (*)(const BinArrays& a, std::uint64_t start, std::size_t begin,
                                   std::size_t end, float* values, std::uint64_t* outer);

// The copy for this CPU.
BinBlock bin_block_for_cpu();

std::uint64_t bin_block_baseline(const BinArrays& a, std::uint64_t start, std::size_t begin, std::size_t end,
                                 float* values, std::uint64_t* outer);
#if TFDEBUG_BIN_ROWS_X86
std::uint64_t bin_block_x86_64_v3(const BinArrays& a, std::uint64_t start, std::size_t begin, std::size_t end,
                                  float* values, std::uint64_t* outer);
std::uint64_t bin_block_x86_64_v4(const BinArrays& a, std::uint64_t start, std::size_t begin, std::size_t end,
                                  float* values, std::uint64_t* outer);
#endif

}  // namespace tfdebug::interpret::detail
