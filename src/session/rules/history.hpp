// Bounded histories of the rules: a ring of the last N values with its median kept up to date,
// and the robust statistics the loss rule uses. Private to tfdebug::session.
#pragma once

#include <cstddef>
#include <limits>
#include <vector>

namespace tfdebug::detail {

// A fixed-capacity ring of doubles (oldest values fall out).
class Ring {
 public:
  explicit Ring(std::size_t capacity) : values_(capacity == 0 ? 1 : capacity) {
    sorted_.reserve(values_.size());
  }
  void push(double value);  // not NaN
  std::size_t size() const noexcept { return size_; }
  bool full() const noexcept { return size_ == values_.size(); }
  std::vector<double> values() const;  // oldest first
  // median_of(values()) without a copy: the values are also kept sorted (a rule asks for the
  // median of every layer's history every step).
  double median() const noexcept;
  // median_absolute_deviation(values(), median) without a copy, from the sorted values: the
  // loss rule asks for it every step.
  double median_absolute_deviation(double median) const noexcept;
  // The largest value kept (NaN when empty).
  double max() const noexcept {
    return sorted_.empty() ? std::numeric_limits<double>::quiet_NaN() : sorted_.back();
  }

 private:
  std::vector<double> values_;
  std::vector<double> sorted_;
  std::size_t next_ = 0;
  std::size_t size_ = 0;
};

double median_of(std::vector<double> values);  // NaN when empty
// Median of |x - median|: the robust scale of the loss rule.
double median_absolute_deviation(const std::vector<double>& values, double median);

}  // namespace tfdebug::detail
