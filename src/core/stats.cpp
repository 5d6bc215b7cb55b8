// The stats driver: chunking, threads, recomputation of hard chunks and the merge.
//
// Note [Shifted moments]: each chunk accumulates s1 = sum(x - K) and s2 = sum((x - K)^2) with
// K the value nearest the mean of its first 16 finite values, so the mean and the sum of squared deviations
// are
//   mean = K + s1/n,   M2 = s2 - s1^2/n.
// The subtraction loses about log2(s2/M2) bits, and multiplies the sums' own rounding errors
// by s2/M2. When that factor exceeds 2^10 (f64 sums) or 2^4 (f32 block partials, whose
// rounding is ~2^-21 of s2) the chunk runs again with K = its mean, which makes s2 ~ M2.
// Found necessary by fuzz/stats_fuzz.cpp: an outlier followed by constants.
//
// Note [Split mean]: a partial keeps its mean as shift + offset, with shift an exact input
// value (or a re-centred mean) and offset small. Merging subtracts shifts first, so the
// difference of two chunk means near 1e8 keeps its low bits; a single double would round each
// mean to ulp(1e8) ~ 1.5e-8 and spoil the between-chunk part of the variance.
//
// Note [Deterministic merge]: chunk boundaries are fixed multiples of kStatsChunk in logical
// order, and chunk results (n, mean, variance, mean |x|) are merged with Chan et al.'s pairwise
// update over a fixed binary tree. The thread that computed a chunk does not matter, so the
// result is bit-identical for any thread count.
//
// Note [Overflowing sums]: only f64 inputs can overflow an f64 sum of squares. Such a chunk is
// recomputed on values scaled by a power of two (exact), and its mean and variance scaled back;
// a variance beyond the f64 range is reported as +inf.
#include "tfdebug/core/stats.hpp"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cmath>
#include <cstring>
#include <limits>
#include <thread>

#include "stats_kernel.hpp"
#include "tensor_walk.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/core/quantized.hpp"

namespace tfdebug {
namespace {

using detail::ChunkKernelFn;
using detail::ChunkSums;
using detail::KernelParams;
using detail::kStatsChunk;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr std::int64_t kParallelThreshold = std::int64_t{1} << 20;

// A mergeable summary of a run of elements.
struct Partial {
  std::int64_t count = 0, nan = 0, pos_inf = 0, neg_inf = 0, zero = 0, subnormal = 0, negative = 0;
  std::int64_t target_overflow = 0, target_underflow = 0, target_subnormal = 0;
  double min = kInf, max = -kInf, abs_max = 0, min_abs_nonzero = kInf;
  std::int64_t finite = 0;
  double shift = 0, offset = 0;  // mean = shift + offset (Note [Split mean])
  double variance = 0, mean_abs = 0;
};

Partial merge(const Partial& a, const Partial& b) {
  Partial r;
  r.count = a.count + b.count;
  r.nan = a.nan + b.nan;
  r.pos_inf = a.pos_inf + b.pos_inf;
  r.neg_inf = a.neg_inf + b.neg_inf;
  r.zero = a.zero + b.zero;
  r.subnormal = a.subnormal + b.subnormal;
  r.negative = a.negative + b.negative;
  r.target_overflow = a.target_overflow + b.target_overflow;
  r.target_underflow = a.target_underflow + b.target_underflow;
  r.target_subnormal = a.target_subnormal + b.target_subnormal;
  r.min = std::min(a.min, b.min);
  r.max = std::max(a.max, b.max);
  r.abs_max = std::max(a.abs_max, b.abs_max);
  r.min_abs_nonzero = std::min(a.min_abs_nonzero, b.min_abs_nonzero);
  r.finite = a.finite + b.finite;
  if (a.finite == 0 || b.finite == 0) {
    const Partial& only = a.finite == 0 ? b : a;
    r.shift = only.shift;
    r.offset = only.offset;
    r.variance = only.variance;
    r.mean_abs = only.mean_abs;
    return r;
  }
  // Chan, Golub & LeVeque's pairwise update, in weights so that nothing overflows before the
  // result itself does.
  const double n = static_cast<double>(r.finite);
  const double wa = static_cast<double>(a.finite) / n;
  const double wb = static_cast<double>(b.finite) / n;
  const double delta = (b.shift - a.shift) + (b.offset - a.offset);
  r.shift = a.shift;
  r.offset = a.offset + delta * wb;
  const double spread = delta * std::sqrt(wa * wb);
  r.variance = wa * a.variance + wb * b.variance + spread * spread;
  r.mean_abs = wa * a.mean_abs + wb * b.mean_abs;
  return r;
}

Partial merge_range(const std::vector<Partial>& parts, std::size_t lo, std::size_t hi) {
  if (hi - lo == 1) return parts[lo];
  const std::size_t mid = lo + (hi - lo) / 2;
  return merge(merge_range(parts, lo, mid), merge_range(parts, mid, hi));
}

// Note [Overflowing sums].
void scaled_moments(const void* data, std::int64_t n, DType dtype, double abs_max, Partial* out) {
  const int exponent = std::ilogb(abs_max) + 1;
  double sum = 0;
  std::int64_t finite = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const double x = load_as_double(data, dtype, i);
    if (std::isfinite(x)) {
      sum += std::ldexp(x, -exponent);
      ++finite;
    }
  }
  const double mean = sum / static_cast<double>(finite);
  double m2 = 0;
  double sabs = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const double x = load_as_double(data, dtype, i);
    if (std::isfinite(x)) {
      const double y = std::ldexp(x, -exponent);
      m2 += (y - mean) * (y - mean);
      sabs += std::fabs(y);
    }
  }
  out->shift = 0;
  out->offset = std::ldexp(mean, exponent);
  out->variance = std::ldexp(m2 / static_cast<double>(finite), 2 * exponent);
  out->mean_abs = std::ldexp(sabs / static_cast<double>(finite), exponent);
}

Partial chunk_partial(ChunkKernelFn kernel, const void* data, std::int64_t n, DType dtype,
                      KernelParams params) {
  // Note [Shifted moments]: K is the value, among the chunk's first 16 finite values, closest
  // to their mean: near the chunk's mean, robust to one outlier, and an exact input value so
  // that deviations x - K of nearby values are exact in the compute type.
  double first[16];
  int first_count = 0;
  auto take = [&](double x) {
    if (std::isfinite(x)) first[first_count++] = x;
  };
  // f32 and f64 read directly (a small tensor's whole cost is mostly this driver; views may be
  // misaligned, so each value is copied out); the other types through load_as_double.
  const auto* bytes = static_cast<const std::byte*>(data);
  if (dtype == DType::f32) {
    for (std::int64_t i = 0; i < n && first_count < 16; ++i) {
      float x;
      std::memcpy(&x, bytes + i * std::int64_t(sizeof x), sizeof x);
      take(static_cast<double>(x));
    }
  } else if (dtype == DType::f64) {
    for (std::int64_t i = 0; i < n && first_count < 16; ++i) {
      double x;
      std::memcpy(&x, bytes + i * std::int64_t(sizeof x), sizeof x);
      take(x);
    }
  } else {
    for (std::int64_t i = 0; i < n && first_count < 16; ++i) take(load_as_double(data, dtype, i));
  }
  double estimate = 0;
  if ((first_count & (first_count - 1)) == 0) {
    // A power of two (16, usually): multiplying by its reciprocal is exact, as dividing is.
    const double inverse = 1.0 / first_count;
    for (int i = 0; i < first_count; ++i) estimate += first[i] * inverse;  // no overflow
  } else {
    for (int i = 0; i < first_count; ++i) estimate += first[i] / first_count;
  }
  params.shift = 0.0;
  for (int i = 0; i < first_count; ++i) {
    if (i == 0 || std::fabs(first[i] - estimate) < std::fabs(params.shift - estimate))
      params.shift = first[i];
  }
  ChunkSums s;
  kernel(data, n, dtype, params, &s);
  // Note [Tiny values]: f32 block partials square deviations in f32, where (x - K)^2
  // underflows once |x - K| < 2^-63. A chunk of such values (vanishing gradients look like
  // this) is summed in f64 instead. Found by fuzz/stats_fuzz.cpp.
  const bool f64_lanes = dtype == DType::f64 || dtype == DType::i32 || dtype == DType::i64;
  if (!params.exact && !f64_lanes && s.abs_max > 0 && s.abs_max < 0x1p-50) {
    params.exact = true;
    kernel(data, n, dtype, params, &s);
  }

  Partial p;
  p.count = s.count;
  p.nan = s.nan;
  p.pos_inf = s.pos_inf;
  p.neg_inf = s.neg_inf;
  p.zero = s.zero;
  p.subnormal = s.subnormal;
  p.negative = s.negative;
  p.target_overflow = s.target_overflow;
  p.target_underflow = s.target_underflow;
  p.target_subnormal = s.target_subnormal;
  p.min = s.min;
  p.max = s.max;
  p.abs_max = s.abs_max;
  p.min_abs_nonzero = s.min_abs_nonzero;
  p.finite = s.count - s.nan - s.pos_inf - s.neg_inf;
  if (p.finite == 0) return p;

  const double nf = static_cast<double>(p.finite);
  if (!std::isfinite(s.s1) || !std::isfinite(s.s2) || !std::isfinite(s.sabs)) {
    scaled_moments(data, n, dtype, s.abs_max, &p);
    return p;
  }
  double m2 = s.s2 - s.s1 * s.s1 / nf;
  // Note [Shifted moments]: re-centre and rerun when the subtraction would cost more than
  // 4 bits (f32 block partials: their rounding is amplified by s2 / m2) or 10 bits (f64 sums).
  const double keep = params.exact || f64_lanes ? 0x1p-10 : 0x1p-4;
  if (s.s2 > 0 && m2 < s.s2 * keep) {
    params.shift = s.shift + s.s1 / nf;
    ChunkSums again;
    kernel(data, n, dtype, params, &again);
    s.shift = again.shift;
    s.s1 = again.s1;
    s.s2 = again.s2;
    m2 = s.s2 - s.s1 * s.s1 / nf;
  }
  p.shift = s.shift;
  p.offset = s.s1 / nf;
  p.variance = std::max(m2, 0.0) / nf;
  p.mean_abs = s.sabs / nf;
  return p;
}

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

ChunkKernelFn resolve_kernel(const std::string& simd) {
  if (simd == "auto") {  // the common case, without a string copy per call
    static const ChunkKernelFn kBest = detail::supported_kernels().empty()
                                           ? &detail::scalar_chunk_kernel
                                           : detail::supported_kernels().front().fn;
    return kBest;
  }
  const std::string wanted = upper(simd);
  if (wanted == "REFERENCE" || wanted == "SCALAR") return &detail::scalar_chunk_kernel;
  const auto& kernels = detail::supported_kernels();
  if (wanted == "AUTO" && !kernels.empty()) return kernels.front().fn;
  for (const auto& k : kernels) {
    if (wanted == k.name) return k.fn;
  }
  std::string names = "auto, reference";
  for (const auto& k : kernels) names += std::string(", ") + k.name;
  throw Error("unknown or unsupported SIMD target '" + simd + "': this CPU and build offer " + names);
}

}  // namespace

std::vector<std::string> simd_targets() {
  std::vector<std::string> names;
  for (const auto& k : detail::supported_kernels()) names.emplace_back(k.name);
  return names;
}

std::string best_simd_target() {
  const auto& kernels = detail::supported_kernels();
  return kernels.empty() ? "reference" : kernels.front().name;
}

namespace {

KernelParams make_params(DType dtype, const StatsOptions& options) {
  KernelParams params;
  params.subnormal_below = dtype_info(dtype).min_normal;
  params.exact = options.exact;
  if (options.target) {
    const DTypeInfo& target = dtype_info(*options.target);
    if (!target.is_floating) {
      throw Error("target dtype " + std::string(target.name) +
                  " is not a floating-point format; choose f16, bf16, f8_e4m3fn, f8_e5m2, f32 or f64");
    }
    params.want_target = true;
    params.target_max = target.max_finite;
    params.target_flush = target.min_subnormal / 2;
    params.target_min_normal = target.min_normal;
  }
  return params;
}

// Runs chunk(c, scratch) for every chunk c on up to options.threads threads and merges the
// partials over a fixed tree (Note [Deterministic merge]).
template <typename ChunkFn>
Partial run_chunks(std::int64_t n, const StatsOptions& options, std::size_t scratch_bytes, ChunkFn chunk) {
  const std::int64_t chunks = (n + kStatsChunk - 1) / kStatsChunk;
  if (chunks <= 1) {  // a small tensor (a model's activations, mostly): no allocation
    if (chunks == 0) return Partial{};
    thread_local std::vector<std::byte> scratch;
    if (scratch.size() < scratch_bytes) scratch.resize(scratch_bytes);
    return chunk(0, scratch.data());
  }
  std::vector<Partial> parts(static_cast<std::size_t>(chunks));
  std::atomic<std::int64_t> next{0};
  auto worker = [&] {
    std::vector<std::byte> scratch(scratch_bytes);
    for (std::int64_t c = next.fetch_add(1, std::memory_order_relaxed); c < chunks;
         c = next.fetch_add(1, std::memory_order_relaxed)) {
      parts[static_cast<std::size_t>(c)] = chunk(c, scratch.data());
    }
  };
  int threads = options.threads > 0 ? options.threads
                                    : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (n < kParallelThreshold) threads = 1;
  threads = static_cast<int>(std::min<std::int64_t>(threads, chunks));
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  return chunks > 0 ? merge_range(parts, 0, parts.size()) : Partial{};
}

Stats finish(const Partial& all, std::int64_t n, DType dtype, const std::optional<DType>& target) {
  Stats s;
  s.dtype = dtype;
  s.count = n;
  s.nan = all.nan;
  s.pos_inf = all.pos_inf;
  s.neg_inf = all.neg_inf;
  s.zero = all.zero;
  s.subnormal = all.subnormal;
  s.negative = all.negative;
  s.positive = n - all.nan - all.pos_inf - all.neg_inf - all.zero - all.negative;
  const bool any_finite = all.finite > 0;
  s.min = any_finite ? all.min : kNaN;
  s.max = any_finite ? all.max : kNaN;
  s.abs_max = any_finite ? all.abs_max : kNaN;
  s.min_abs_nonzero = all.min_abs_nonzero < kInf ? all.min_abs_nonzero : kNaN;
  const double mean = all.shift + all.offset;
  s.mean = any_finite ? mean : kNaN;
  s.variance = any_finite ? all.variance : kNaN;
  s.std = std::sqrt(s.variance);
  const double nf = static_cast<double>(all.finite);
  s.l1 = any_finite ? all.mean_abs * nf : 0.0;
  s.l2 = any_finite ? std::sqrt(nf) * std::hypot(mean, s.std) : 0.0;
  s.range_used = s.abs_max / dtype_info(dtype).max_finite;
  if (target) {
    TargetFit fit;
    fit.dtype = *target;
    fit.range_used = s.abs_max / dtype_info(*target).max_finite;
    fit.overflow = all.target_overflow;
    fit.underflow = all.target_underflow;
    fit.subnormal = all.target_subnormal;
    const double count = n > 0 ? static_cast<double>(n) : 1.0;
    fit.overflow_fraction = static_cast<double>(fit.overflow) / count;
    fit.underflow_fraction = static_cast<double>(fit.underflow) / count;
    s.target = fit;
  }
  return s;
}

}  // namespace

Stats repeated(Stats s, std::int64_t times) {
  if (times == 1) return s;
  for (std::int64_t* count :
       {&s.count, &s.nan, &s.pos_inf, &s.neg_inf, &s.zero, &s.subnormal, &s.negative, &s.positive}) {
    *count *= times;
  }
  s.l1 *= static_cast<double>(times);
  s.l2 *= std::sqrt(static_cast<double>(times));
  if (s.target) {
    s.target->overflow *= times;
    s.target->underflow *= times;
    s.target->subnormal *= times;
  }
  return s;
}

Stats compute_stats(TensorView view, const StatsOptions& options) {
  std::int64_t repeats = 1;
  view = distinct_elements(view, repeats);
  if (repeats > 1) return repeated(compute_stats(view, options), repeats);
  const ChunkKernelFn kernel = resolve_kernel(options.simd);
  const DType dtype = view.dtype();
  const KernelParams params = make_params(dtype, options);
  const std::int64_t n = view.numel();
  const bool contiguous = view.is_contiguous();
  const auto elem = static_cast<std::int64_t>(view.element_size());
  const auto* base = static_cast<const std::byte*>(view.data());
  const Partial all = run_chunks(n, options, contiguous ? 0 : static_cast<std::size_t>(kStatsChunk * elem),
                                 [&](std::int64_t c, std::byte* scratch) {
                                   const std::int64_t start = c * kStatsChunk;
                                   const std::int64_t count = std::min(kStatsChunk, n - start);
                                   const std::byte* data = base + start * elem;
                                   if (!contiguous) {
                                     detail::gather_range(view, start, count, scratch);
                                     data = scratch;
                                   }
                                   return chunk_partial(kernel, data, count, dtype, params);
                                 });
  return finish(all, n, dtype, options.target);
}

// Note [Quantised chunks]: kStatsChunk (16384) is a whole number of blocks of every format
// (32 or 256 values), so each chunk decodes its own blocks into f32 scratch and runs the f32
// kernel on them: the decoded tensor never exists as a whole.
Stats compute_stats(const QuantizedView& view, const StatsOptions& options) {
  static_assert(kStatsChunk % 256 == 0);
  const ChunkKernelFn kernel = resolve_kernel(options.simd);
  const KernelParams params = make_params(DType::f32, options);
  const BlockFormatInfo& info = block_format_info(view.format);
  const std::int64_t n = view.numel();
  if (n % info.block_elements != 0) {
    throw Error("a " + std::string(info.name) + " tensor needs a multiple of " +
                std::to_string(info.block_elements) + " values, not " + std::to_string(n));
  }
  const Partial all =
      run_chunks(n, options, static_cast<std::size_t>(kStatsChunk) * sizeof(float),
                 [&](std::int64_t c, std::byte* scratch) {
                   const std::int64_t start = c * kStatsChunk;
                   const std::int64_t count = std::min(kStatsChunk, n - start);
                   auto* values = reinterpret_cast<float*>(scratch);
                   dequantize(view.format, view.data + start / info.block_elements * info.block_bytes,
                              count / info.block_elements, values);
                   return chunk_partial(kernel, values, count, DType::f32, params);
                 });
  return finish(all, n, DType::f32, options.target);
}

struct StatsAccumulator::State {
  ChunkKernelFn kernel;
  DType dtype;
  KernelParams params;
  std::optional<DType> target;
  std::int64_t count = 0;
  Partial all;
  std::vector<std::byte> scratch;
};

StatsAccumulator::StatsAccumulator(DType dtype, const StatsOptions& options)
    : state_(std::make_unique<State>(State{resolve_kernel(options.simd),
                                           dtype,
                                           make_params(dtype, options),
                                           options.target,
                                           0,
                                           Partial{},
                                           {}})) {}
StatsAccumulator::StatsAccumulator(StatsAccumulator&&) noexcept = default;
StatsAccumulator& StatsAccumulator::operator=(StatsAccumulator&&) noexcept = default;
StatsAccumulator::~StatsAccumulator() = default;

void StatsAccumulator::add(TensorView values) {
  State& st = *state_;
  if (values.dtype() != st.dtype) {
    throw Error("StatsAccumulator for " + std::string(dtype_name(st.dtype)) + " values was given " +
                std::string(dtype_name(values.dtype())));
  }
  const std::int64_t n = values.numel();
  const bool contiguous = values.is_contiguous();
  const auto elem = static_cast<std::int64_t>(values.element_size());
  if (!contiguous) st.scratch.resize(static_cast<std::size_t>(kStatsChunk * elem));
  const auto* base = static_cast<const std::byte*>(values.data());
  for (std::int64_t start = 0; start < n; start += kStatsChunk) {
    const std::int64_t count = std::min(kStatsChunk, n - start);
    const std::byte* data = base + start * elem;
    if (!contiguous) {
      detail::gather_range(values, start, count, st.scratch.data());
      data = st.scratch.data();
    }
    st.all = merge(st.all, chunk_partial(st.kernel, data, count, st.dtype, st.params));
  }
  st.count += n;
}

void StatsAccumulator::merge_from(const StatsAccumulator& later) {
  state_->all = merge(state_->all, later.state_->all);
  state_->count += later.state_->count;
}

Stats StatsAccumulator::result() const {
  return finish(state_->all, state_->count, state_->dtype, state_->target);
}

}  // namespace tfdebug
