#include "tfdebug/core/quantile.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <string>

#include "tensor_walk.hpp"
#include "tfdebug/core/error.hpp"

namespace tfdebug {
namespace {

void check_probability(double p) {
  if (!(p >= 0.0 && p <= 1.0)) {
    throw Error("quantile probability " + std::to_string(p) + " is outside [0, 1]");
  }
}

}  // namespace

std::vector<double> quantiles_exact(TensorView view, std::span<const double> probabilities) {
  for (double p : probabilities) check_probability(p);
  std::vector<double> values;
  values.reserve(static_cast<std::size_t>(view.numel()));
  detail::visit_values(view, [&](std::span<const double> block) {
    for (double x : block) {
      if (std::isfinite(x)) values.push_back(x);
    }
  });
  if (values.empty()) throw Error("quantiles: the tensor " + view.describe() + " has no finite value");
  std::vector<double> out;
  out.reserve(probabilities.size());
  const double last = static_cast<double>(values.size() - 1);
  for (double p : probabilities) {
    const double h = p * last;
    const auto lo = static_cast<std::size_t>(std::floor(h));
    const auto hi = std::min(lo + 1, values.size() - 1);
    std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(lo), values.end());
    const double x_lo = values[lo];
    double x_hi = x_lo;
    if (hi != lo)
      x_hi = *std::min_element(values.begin() + static_cast<std::ptrdiff_t>(lo) + 1, values.end());
    out.push_back(x_lo + (x_hi - x_lo) * (h - static_cast<double>(lo)));
  }
  return out;
}

QuantileSketch::QuantileSketch(int mantissa_bits) : mantissa_bits_(mantissa_bits) {
  if (mantissa_bits < 1 || mantissa_bits > 20) {
    throw Error("QuantileSketch: mantissa_bits must be in [1, 20], got " + std::to_string(mantissa_bits));
  }
}

double QuantileSketch::relative_accuracy() const noexcept {
  return std::ldexp(1.0, -(mantissa_bits_ + 1));
}

void QuantileSketch::add(double value) {
  if (!std::isfinite(value)) return;
  ++count_;
  if (value == 0) {
    ++zeros_;
    return;
  }
  const auto bits = std::bit_cast<std::uint64_t>(std::fabs(value));
  const int exponent = static_cast<int>(bits >> 52);
  const auto slot = static_cast<std::size_t>((bits >> (52 - mantissa_bits_)) & ((1u << mantissa_bits_) - 1));
  auto& pages = value < 0 ? negative_ : positive_;
  auto& page = pages[exponent];
  if (page.empty()) page.assign(std::size_t{1} << mantissa_bits_, 0);
  ++page[slot];
}

void QuantileSketch::add(TensorView view) {
  detail::visit_values(view, [&](std::span<const double> block) {
    for (double x : block) add(x);
  });
}

void QuantileSketch::merge(const QuantileSketch& other) {
  if (other.mantissa_bits_ != mantissa_bits_) {
    throw Error("QuantileSketch::merge: sketches use " + std::to_string(mantissa_bits_) + " and " +
                std::to_string(other.mantissa_bits_) + " mantissa bits");
  }
  count_ += other.count_;
  zeros_ += other.zeros_;
  auto merge_pages = [this](auto& into, const auto& from) {
    for (const auto& [exponent, counts] : from) {
      auto& page = into[exponent];
      if (page.empty()) page.assign(std::size_t{1} << mantissa_bits_, 0);
      for (std::size_t i = 0; i < counts.size(); ++i) page[i] += counts[i];
    }
  };
  merge_pages(negative_, other.negative_);
  merge_pages(positive_, other.positive_);
}

std::size_t QuantileSketch::buckets_in_use() const noexcept {
  return (negative_.size() + positive_.size()) * (std::size_t{1} << mantissa_bits_);
}

double QuantileSketch::quantile(double p) const {
  check_probability(p);
  if (count_ == 0) throw Error("QuantileSketch::quantile: the sketch holds no finite value");
  const auto rank = static_cast<std::int64_t>(std::floor(p * static_cast<double>(count_ - 1)));
  auto midpoint = [this](int exponent, std::size_t slot) {
    const std::uint64_t lo_bits = (static_cast<std::uint64_t>(exponent) << 52) |
                                  (static_cast<std::uint64_t>(slot) << (52 - mantissa_bits_));
    // The bucket is [lo, lo + 2^(E - m)) with E the unbiased exponent (-1022 for subnormals).
    const int unbiased = std::max(exponent, 1) - 1023;
    return std::bit_cast<double>(lo_bits) + std::ldexp(1.0, unbiased - mantissa_bits_ - 1);
  };
  std::int64_t seen = 0;
  // Ascending order: negatives from the largest magnitude down, zeros, positives upwards.
  for (auto it = negative_.rbegin(); it != negative_.rend(); ++it) {
    for (std::size_t slot = it->second.size(); slot-- > 0;) {
      seen += it->second[slot];
      if (seen > rank) return -midpoint(it->first, slot);
    }
  }
  seen += zeros_;
  if (seen > rank) return 0.0;
  for (const auto& [exponent, counts] : positive_) {
    for (std::size_t slot = 0; slot < counts.size(); ++slot) {
      seen += counts[slot];
      if (seen > rank) return midpoint(exponent, slot);
    }
  }
  TFDEBUG_ASSERT(false, "quantile rank beyond the sketch's count");
  return 0.0;
}

}  // namespace tfdebug
