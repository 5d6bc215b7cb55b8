#include "mad_scale.hpp"

#include <algorithm>
#include <cmath>

#include "batching.hpp"

namespace tfdebug::interpret::detail {
namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

std::vector<double> mad_scales(std::span<const float> training, std::size_t n) {
  std::vector<double> scale(n, 1.0);
  if (training.empty()) return scale;
  const std::int64_t rows = row_count(training, static_cast<std::int64_t>(n), "the training data", true);
  for (std::size_t j = 0; j < n; ++j) {
    std::vector<double> column(static_cast<std::size_t>(rows));
    for (std::int64_t r = 0; r < rows; ++r)
      column[static_cast<std::size_t>(r)] = training[static_cast<std::size_t>(r) * n + j];
    const double mid = median(column);
    std::vector<double> deviation(column.size());
    for (std::size_t r = 0; r < column.size(); ++r) deviation[r] = std::fabs(column[r] - mid);
    double s = median(deviation);
    if (!(s > 0)) {  // Note [MAD fallback]
      double mean = 0, var = 0;
      for (const double v : column) mean += v;
      mean /= static_cast<double>(rows);
      for (const double v : column) var += (v - mean) * (v - mean);
      s = std::sqrt(var / static_cast<double>(rows));
    }
    scale[j] = s > 0 ? s : 1.0;
  }
  return scale;
}

}  // namespace tfdebug::interpret::detail
