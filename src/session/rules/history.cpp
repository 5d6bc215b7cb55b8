#include "history.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tfdebug::detail {

void Ring::push(double value) {
  if (full()) sorted_.erase(std::lower_bound(sorted_.begin(), sorted_.end(), values_[next_]));
  sorted_.insert(std::upper_bound(sorted_.begin(), sorted_.end(), value), value);
  values_[next_] = value;
  next_ = (next_ + 1) % values_.size();
  size_ = std::min(size_ + 1, values_.size());
}

double Ring::median() const noexcept {
  if (sorted_.empty()) return std::numeric_limits<double>::quiet_NaN();
  const std::size_t mid = sorted_.size() / 2;
  return sorted_.size() % 2 == 1 ? sorted_[mid] : 0.5 * (sorted_[mid - 1] + sorted_[mid]);
}

// The deviations |x - median| of sorted values are two sorted runs: median - x for the values at
// or below the median, read downwards, and x - median above it, read upwards. Merging them
// finds the middle deviations in one pass, with no copy; median - x is exactly -(x - median)
// (a rounded difference changes sign with its operands), so the deviations are the ones
// median_absolute_deviation(values(), median) sorts.
double Ring::median_absolute_deviation(double median) const noexcept {
  const std::size_t n = sorted_.size();
  if (n == 0) return std::numeric_limits<double>::quiet_NaN();
  std::size_t below = std::size_t(std::upper_bound(sorted_.begin(), sorted_.end(), median) - sorted_.begin());
  std::size_t above = below;
  double previous = 0;
  double current = 0;
  for (std::size_t taken = 0; taken <= n / 2; ++taken) {
    previous = current;
    const bool take_below =
        above == n || (below > 0 && median - sorted_[below - 1] <= sorted_[above] - median);
    current = take_below ? median - sorted_[--below] : sorted_[above++] - median;
  }
  return n % 2 == 1 ? current : 0.5 * (previous + current);
}

std::vector<double> Ring::values() const {
  std::vector<double> out;
  out.reserve(size_);
  for (std::size_t i = 0; i < size_; ++i)
    out.push_back(values_[(next_ + values_.size() - size_ + i) % values_.size()]);
  return out;
}

double median_of(std::vector<double> values) {
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  const std::size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + std::ptrdiff_t(mid), values.end());
  const double upper = values[mid];
  if (values.size() % 2 == 1) return upper;
  const double lower = *std::max_element(values.begin(), values.begin() + std::ptrdiff_t(mid));
  return 0.5 * (lower + upper);
}

double median_absolute_deviation(const std::vector<double>& values, double median) {
  std::vector<double> deviations;
  deviations.reserve(values.size());
  for (const double v : values) deviations.push_back(std::abs(v - median));
  return median_of(std::move(deviations));
}

}  // namespace tfdebug::detail
