#include "tfdebug/core/normal.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace tfdebug {

double normal_cdf(double z) {
  return 0.5 * std::erfc(-z / std::numbers::sqrt2);
}

double normal_quantile(double p, bool refine) {
  static constexpr double kNumCentral[] = {-3.969683028665376e+01, 2.209460984245205e+02,
                                           -2.759285104469687e+02, 1.383577518672690e+02,
                                           -3.066479806614716e+01, 2.506628277459239e+00};
  static constexpr double kDenCentral[] = {-5.447609879822406e+01, 1.615858368580409e+02,
                                           -1.556989798598866e+02, 6.680131188771972e+01,
                                           -1.328068155288572e+01};
  static constexpr double kNumTail[] = {-7.784894002430293e-03, -3.223964580411365e-01,
                                        -2.400758277161838e+00, -2.549732539343734e+00,
                                        4.374664141464968e+00,  2.938163982698783e+00};
  static constexpr double kDenTail[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                                        3.754408661907416e+00};
  p = std::clamp(p, 1e-300, 1 - 1e-16);
  const auto tail = [&](double q) {
    return (((((kNumTail[0] * q + kNumTail[1]) * q + kNumTail[2]) * q + kNumTail[3]) * q + kNumTail[4]) * q +
            kNumTail[5]) /
           ((((kDenTail[0] * q + kDenTail[1]) * q + kDenTail[2]) * q + kDenTail[3]) * q + 1);
  };
  double x = 0;
  if (p < 0.02425) {
    x = tail(std::sqrt(-2 * std::log(p)));
  } else if (p > 1 - 0.02425) {
    x = -tail(std::sqrt(-2 * std::log1p(-p)));
  } else {
    const double q = p - 0.5, r = q * q;
    x = (((((kNumCentral[0] * r + kNumCentral[1]) * r + kNumCentral[2]) * r + kNumCentral[3]) * r +
          kNumCentral[4]) *
             r +
         kNumCentral[5]) *
        q /
        (((((kDenCentral[0] * r + kDenCentral[1]) * r + kDenCentral[2]) * r + kDenCentral[3]) * r +
          kDenCentral[4]) *
             r +
         1);
  }
  if (!refine) return x;
  const double e = normal_cdf(x) - p;
  const double u = e * std::sqrt(2 * std::numbers::pi) * std::exp(x * x / 2);
  return x - u / (1 + x * u / 2);
}

}  // namespace tfdebug
