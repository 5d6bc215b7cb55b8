// Is this tensor healthy, and would it survive a cast to f16 or fp8? Build with the project
// (`make build`) and run build/release/examples/tensor_health.
#include <tfdebug/core/histogram.hpp>
#include <tfdebug/core/stats.hpp>

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

int main() {
  // A stand-in for a layer's activations: mostly N(0, 3), one overflow, one NaN, some zeros.
  std::vector<float> activations(4096 * 64);
  std::mt19937 rng(0);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  for (float& x : activations) x = normal(rng) > 2.0f ? normal(rng) : 0.0f;
  activations[123] = 1e6f;
  activations[4567] = NAN;

  const tfdebug::TensorView view(activations.data(), tfdebug::DType::f32, {4096, 64});
  tfdebug::StatsOptions options;
  options.target = tfdebug::DType::f16;
  const tfdebug::Stats s = tfdebug::compute_stats(view, options);

  std::printf("%lld NaN, %lld Inf, %.1f%% zeros\n", static_cast<long long>(s.nan),
              static_cast<long long>(s.pos_inf + s.neg_inf), 100.0 * s.zero / s.count);
  std::printf("mean %.6g  std %.6g  abs max %.6g\n", s.mean, s.std, s.abs_max);
  std::printf("as f16: %lld values overflow, %lld flush to zero (range used %.3g)\n",
              static_cast<long long>(s.target->overflow), static_cast<long long>(s.target->underflow),
              s.target->range_used);
  const tfdebug::Log2Histogram magnitudes = tfdebug::histogram_log2(view);
  std::printf("magnitudes span 2^%d .. 2^%d\n", magnitudes.min_exponent,
              magnitudes.min_exponent + static_cast<int>(magnitudes.counts.size()) - 1);
  return s.nan > 0 ? 1 : 0;  // a CI gate would fail here
}
