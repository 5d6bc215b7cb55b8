// Note [Seeded streams]: the random draws of the sampling methods come from counter-based
// streams, one per sample: stream k of seed s is SplitMix64 started at a mix of (s, k). A sample's
// noise is then made where its point is built, a batch at a time (no samples x input buffer), it
// does not depend on max_batch or on the order the batches run, and it is the same on every
// standard library (std::normal_distribution's algorithm is the library's choice).
//
// Note [Ziggurat normals]: normal() is Marsaglia and Tsang's ziggurat (2000) with 256 kLayers and
// Doornik's (2005) fix: the layer comes from the low 8 bits of a 64-bit draw and the abscissa from
// its top 53, so the two are independent. About 99% of draws cost one SplitMix64 step, a table
// load, a compare and a multiply; the polar method it replaced cost two draws, a log, a square root
// and a division per pair and rejected 21% of them, and was most of randomized smoothing's cost
// over a bare LibTorch loop (docs/performance.md). fill_normal writes a whole row of normals.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <span>

namespace tfdebug::interpret::detail {

// The ziggurat's kLayers for f(x) = exp(-x^2/2): layer i spans heights [f(x[i]), f(x[i+1])] and
// widths [0, x[i]], each of area v; layer 0 is the base strip of width r plus the tail beyond r,
// drawn as a rectangle of width v / f(r).
struct ZigguratTables {
  static constexpr int kLayers = 256;
  static constexpr double kTail = 3.6541528853610088;  // r = x[1]: where the tail begins
  std::array<double, kLayers + 1> x{};
  std::array<double, kLayers + 1> f{};  // f(x[i])
  std::array<double, kLayers> inner{};  // x[i + 1] / x[i]: below it a draw is under the curve

  ZigguratTables() {
    const double fr = std::exp(-0.5 * kTail * kTail);
    const double v = kTail * fr + std::sqrt(std::numbers::pi / 2) * std::erfc(kTail / std::sqrt(2.0));
    x[0] = v / fr;
    x[1] = kTail;
    for (int i = 1; i < kLayers - 1; ++i)
      x[i + 1] = std::sqrt(-2 * std::log(v / x[i] + std::exp(-0.5 * x[i] * x[i])));
    x[kLayers] = 0;
    for (int i = 0; i <= kLayers; ++i) f[i] = std::exp(-0.5 * x[i] * x[i]);
    f[0] = fr;  // the base strip's height is f(r), not f(v / f(r))
    for (int i = 0; i < kLayers; ++i) inner[i] = x[i + 1] / x[i];
  }
};

inline const ZigguratTables& ziggurat_tables() {
  static const ZigguratTables kTables;
  return kTables;
}

class Stream {
 public:
  Stream(std::uint64_t seed, std::uint64_t stream) : state_(start(seed, stream)), zig_(ziggurat_tables()) {}

  // SplitMix64's increment, its output function, and stream (seed, stream)'s state before its
  // first draw: the k-th next() (k = 1, 2, ...) is mix(start + k * kGamma), so a stream's draws can
  // also be made side by side (Note [Rows of bin draws] in lime_bins.hpp).
  static constexpr std::uint64_t kGamma = 0x9e3779b97f4a7c15ULL;
  static std::uint64_t mix(std::uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  static std::uint64_t start(std::uint64_t seed, std::uint64_t stream) {
    return mix(seed ^ mix(stream + 0x632be59bd9b4e019ULL));
  }

  std::uint64_t next() {
    state_ += kGamma;
    return mix(state_);
  }
  // Uniform in [0, 1), 53 bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  // Uniform integer in [0, n).
  std::uint64_t below(std::uint64_t n) {
    return static_cast<std::uint64_t>(uniform() * static_cast<double>(n));
  }
  // Standard normal (Note [Ziggurat normals]).
  double normal() {
    for (;;) {
      const std::uint64_t bits = next();
      const auto i = static_cast<std::size_t>(bits & 0xffU);
      // The top 53 bits as a signed value in [-1, 1).
      const double u = static_cast<double>(static_cast<std::int64_t>(bits) >> 11) * 0x1.0p-52;
      const double x = u * zig_.x[i];
      if (std::fabs(u) < zig_.inner[i]) return x;
      if (i == 0) return u < 0 ? -tail() : tail();
      // The wedge between the layer's rectangle and the curve.
      const double y = zig_.f[i] + uniform() * (zig_.f[i + 1] - zig_.f[i]);
      if (y < std::exp(-0.5 * x * x)) return x;
    }
  }
  // out[j] = mean[j] + scale * normal(), in order: the same values as that many normal() calls.
  void fill_normal(std::span<float> out, std::span<const float> mean, double scale) {
    for (std::size_t j = 0; j < out.size(); ++j) out[j] = static_cast<float>(mean[j] + scale * normal());
  }

 private:
  // Marsaglia's tail beyond r (1964): exponential proposals, accepted under the normal's tail.
  double tail() {
    const double r = ZigguratTables::kTail;
    for (;;) {
      const double a = -std::log(1 - uniform()) / r;
      const double b = -std::log(1 - uniform());
      if (b + b >= a * a) return r + a;
    }
  }
  std::uint64_t state_;
  const ZigguratTables& zig_;
};

}  // namespace tfdebug::interpret::detail
