// bin_block_baseline: bin_rows_kernel.inc compiled for the build's own target (src/interpret/CMakeLists.txt).
#include "bin_rows.hpp"

#define TFDEBUG_BIN_COLUMNS bin_columns_baseline
#include "bin_rows_kernel.inc"

namespace tfdebug::interpret::detail {
namespace {

// 2: x86-64-v4 (AVX-512 F, DQ, BW, VL), 1: x86-64-v3 (AVX2, FMA, BMI2), 0: the baseline.
int cpu_level() {
#if TFDEBUG_BIN_ROWS_X86
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl"))
    return 2;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi2"))
    return 1;
#endif
  return 0;
}

}  // namespace

BinColumns bin_columns_for_cpu() {
#if TFDEBUG_BIN_ROWS_X86
  static const int kLevel = cpu_level();
  if (kLevel == 2) return bin_columns_x86_64_v4;
  if (kLevel == 1) return bin_columns_x86_64_v3;
#endif
  return bin_columns_baseline;
}

}  // namespace tfdebug::interpret::detail
