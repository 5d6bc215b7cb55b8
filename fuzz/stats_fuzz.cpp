// libFuzzer: the stats kernel on arbitrary bytes, every dtype, every supported SIMD target,
// both precision modes, checked against the scalar reference (a differential fuzzer); and
// compute_extremes, compute_range and all_finite (the best SIMD target) against the reference's
// classification and range, and column_nonzero against the values.
//
// Input: byte 0 picks the dtype, byte 1 the options (target dtype, exact; its high four bits the
// column count for column_nonzero), byte 2 a misalignment 0..7; the rest is tensor data.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "tfdebug/core/stats.hpp"

namespace {

[[noreturn]] void fail(const char* what, double a, double b, const char* target) {
  std::fprintf(stderr, "stats_fuzz: %s differs on %s: %.17g vs reference %.17g\n", what, target, a, b);
  std::abort();
}

void same(double a, double b, const char* what, const char* target) {
  if (std::isnan(b) ? !std::isnan(a) : a != b) fail(what, a, b, target);
}

void close(double a, double b, double scale, double tolerance, const char* what, const char* target) {
  if (std::isnan(b) || std::isinf(b)) {
    same(a, b, what, target);
    return;
  }
  if (!(std::fabs(a - b) <= tolerance * std::max(std::fabs(b), scale) + 1e-300)) fail(what, a, b, target);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 3) return 0;
  const auto dtypes = tfdebug::all_dtypes();
  const tfdebug::DType dtype = dtypes[data[0] % dtypes.size()];
  const std::uint8_t flags = data[1];
  const std::size_t offset = data[2] % 8;
  data += 3;
  size -= 3;
  const std::size_t elem = tfdebug::dtype_size(dtype);
  const auto n = static_cast<std::int64_t>(size / elem);
  std::vector<std::uint8_t> buffer(size + 8);
  if (size > 0) std::memcpy(buffer.data() + offset, data, size);
  const tfdebug::TensorView view(buffer.data() + offset, dtype, {n});

  tfdebug::StatsOptions options;
  options.exact = (flags & 1) != 0;
  static const tfdebug::DType kTargets[] = {tfdebug::DType::f16, tfdebug::DType::bf16,
                                            tfdebug::DType::f8_e4m3fn, tfdebug::DType::f8_e5m2};
  if (flags & 2) options.target = kTargets[(flags >> 2) % 4];
  tfdebug::StatsOptions reference_options = options;
  reference_options.simd = "reference";
  const tfdebug::Stats r = tfdebug::compute_stats(view, reference_options);
  const bool f64_lanes =
      dtype == tfdebug::DType::f64 || dtype == tfdebug::DType::i32 || dtype == tfdebug::DType::i64;
  const double tolerance = options.exact || f64_lanes ? 1e-12 : 1e-6;

  for (const std::string& target : tfdebug::simd_targets()) {
    options.simd = target;
    const tfdebug::Stats s = tfdebug::compute_stats(view, options);
    const char* t = target.c_str();
    same(static_cast<double>(s.nan), static_cast<double>(r.nan), "nan", t);
    same(static_cast<double>(s.pos_inf), static_cast<double>(r.pos_inf), "pos_inf", t);
    same(static_cast<double>(s.neg_inf), static_cast<double>(r.neg_inf), "neg_inf", t);
    same(static_cast<double>(s.zero), static_cast<double>(r.zero), "zero", t);
    same(static_cast<double>(s.subnormal), static_cast<double>(r.subnormal), "subnormal", t);
    same(static_cast<double>(s.negative), static_cast<double>(r.negative), "negative", t);
    same(s.min, r.min, "min", t);
    same(s.max, r.max, "max", t);
    same(s.abs_max, r.abs_max, "abs_max", t);
    same(s.min_abs_nonzero, r.min_abs_nonzero, "min_abs_nonzero", t);
    const double scale = std::isfinite(r.abs_max) ? r.abs_max : 0.0;
    close(s.mean, r.mean, scale, tolerance, "mean", t);
    close(s.variance, r.variance, scale * scale, tolerance, "variance", t);
    close(s.l1, r.l1, 0.0, tolerance, "l1", t);
    // The fast kernel sums squares of deviations from a shift taken from the first values
    // (Note [Block partials]), so its error is relative to those, not to the norm: the same
    // scale as the variance's, over count values (an f16 input of 13 x -1252 then 175 values
    // near 0 shifts by ~-1017 and misses the norm by 1.4e-6 of itself).
    close(s.l2 * s.l2, r.l2 * r.l2, static_cast<double>(r.count) * scale * scale, tolerance, "l2", t);
    if (r.target) {
      same(static_cast<double>(s.target->overflow), static_cast<double>(r.target->overflow), "overflow", t);
      same(static_cast<double>(s.target->underflow), static_cast<double>(r.target->underflow), "underflow",
           t);
      same(static_cast<double>(s.target->subnormal), static_cast<double>(r.target->subnormal), "t_subnormal",
           t);
    }
  }
  const tfdebug::Extremes e = tfdebug::compute_extremes(view);
  same(static_cast<double>(e.count), static_cast<double>(r.count), "extremes count", "extremes");
  same(e.nonfinite ? 1.0 : 0.0, r.nonfinite() > 0 ? 1.0 : 0.0, "extremes nonfinite", "extremes");
  same(e.zero ? 1.0 : 0.0, r.zero > 0 ? 1.0 : 0.0, "extremes zero", "extremes");
  const tfdebug::Extremes range = tfdebug::compute_range(view);
  same(range.nonfinite ? 1.0 : 0.0, r.nonfinite() > 0 ? 1.0 : 0.0, "range nonfinite", "range");
  same(tfdebug::all_finite(view) ? 0.0 : 1.0, r.nonfinite() > 0 ? 1.0 : 0.0, "all_finite", "range");
  const tfdebug::Extremes norm = tfdebug::compute_range_l2(view);
  same(norm.nonfinite ? 1.0 : 0.0, r.nonfinite() > 0 ? 1.0 : 0.0, "range_l2 nonfinite", "range_l2");
  if (!e.nonfinite && r.count > 0) {
    same(e.min, r.min, "extremes min", "extremes");
    same(e.max, r.max, "extremes max", "extremes");
    same(e.abs_max, r.abs_max, "extremes abs_max", "extremes");
    same(range.min, r.min, "range min", "range");
    same(range.max, r.max, "range max", "range");
    same(range.abs_max, r.abs_max, "range abs_max", "range");
    same(norm.min, r.min, "range_l2 min", "range_l2");
    same(norm.max, r.max, "range_l2 max", "range_l2");
    // f32's f64 squares are exact, so the reference's own rounding is what differs; the other
    // dtypes take the fast full statistics (f32 block partials), against an exact reference.
    const double l2_tolerance = dtype == tfdebug::DType::f64   ? 1e-9
                                : dtype == tfdebug::DType::f32 ? 1e-6
                                                               : 1e-5;
    close(norm.l2, r.l2, 0.0, l2_tolerance, "range_l2 l2", "range_l2");
  }
  // column_nonzero on the values as a matrix of (flags >> 4) + 1 columns, against the values.
  const std::int64_t cols = (flags >> 4) + 1;
  if (tfdebug::is_floating(dtype) && n >= cols) {
    const std::int64_t rows = n / cols;
    const tfdebug::TensorView matrix(view.data(), dtype, {rows, cols});
    std::vector<std::uint8_t> nonzero(static_cast<std::size_t>(cols), 0);
    tfdebug::column_nonzero(matrix, nonzero.data());
    for (std::int64_t c = 0; c < cols; ++c) {
      bool any = false;
      for (std::int64_t row = 0; row < rows; ++row) {
        const double x = matrix.at({row, c});
        any = any || x != 0 || std::isnan(x);
      }
      same(nonzero[static_cast<std::size_t>(c)], any ? 1.0 : 0.0, "column_nonzero", "columns");
    }
  }
  return 0;
}
