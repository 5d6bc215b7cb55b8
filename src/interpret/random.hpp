// Note [Seeded streams]: the random draws of the sampling methods come from counter-based
// streams, one per sample: stream k of seed s is SplitMix64 started at a mix of (s, k). A sample's
// noise is then made where its point is built, a batch at a time (no samples x input buffer), it
// does not depend on max_batch or on the order the batches run, and it is the same on every
// standard library (std::normal_distribution's algorithm is the library's choice).
#pragma once

#include <cmath>
#include <cstdint>

namespace tfdebug::interpret::detail {

class Stream {
 public:
  Stream(std::uint64_t seed, std::uint64_t stream)
      : state_(mix(seed ^ mix(stream + 0x632be59bd9b4e019ULL))) {}

  std::uint64_t next() {
    state_ += 0x9e3779b97f4a7c15ULL;
    return mix(state_);
  }
  // Uniform in [0, 1), 53 bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  // Uniform integer in [0, n).
  std::uint64_t below(std::uint64_t n) {
    return static_cast<std::uint64_t>(uniform() * static_cast<double>(n));
  }
  // Standard normal, Marsaglia's polar method (the second value of each pair kept for the next call).
  double normal() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    double u = 0, v = 0, s = 0;
    do {
      u = 2 * uniform() - 1;
      v = 2 * uniform() - 1;
      s = u * u + v * v;
    } while (s >= 1 || s == 0);
    const double f = std::sqrt(-2 * std::log(s) / s);
    spare_ = v * f;
    has_spare_ = true;
    return u * f;
  }

 private:
  static std::uint64_t mix(std::uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  std::uint64_t state_;
  double spare_ = 0;
  bool has_spare_ = false;
};

}  // namespace tfdebug::interpret::detail
