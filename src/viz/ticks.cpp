#include "tfdebug/viz/ticks.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace tfdebug::viz {
namespace {

// "1.5e-05" -> "1.5e-5", "2e+06" -> "2e6": C's exponent padding is noise on an axis.
std::string tidy_exponent(std::string text) {
  const auto e = text.find('e');
  if (e == std::string::npos) return text;
  std::string mantissa = text.substr(0, e);
  std::string exponent = text.substr(e + 1);
  bool negative = false;
  if (!exponent.empty() && (exponent[0] == '+' || exponent[0] == '-')) {
    negative = exponent[0] == '-';
    exponent.erase(0, 1);
  }
  while (exponent.size() > 1 && exponent[0] == '0') exponent.erase(0, 1);
  if (mantissa.find('.') != std::string::npos) {
    while (mantissa.back() == '0') mantissa.pop_back();
    if (mantissa.back() == '.') mantissa.pop_back();
  }
  return mantissa + "e" + (negative ? "-" : "") + exponent;
}

// The shortest printf rendering of `value` (fixed or exponent form) that reads back within
// `tolerance`.
std::string shortest(double value, double tolerance, bool exponent_form) {
  char text[64];
  for (int precision = 0; precision <= 15; ++precision) {
    std::snprintf(text, sizeof text, exponent_form ? "%.*e" : "%.*f", precision, value);
    if (std::fabs(std::strtod(text, nullptr) - value) <= tolerance) break;
  }
  return exponent_form ? tidy_exponent(text) : std::string(text);
}

std::int64_t tick_count(double lo, double hi, double step) {
  return static_cast<std::int64_t>(std::floor(hi / step + 1e-9) - std::ceil(lo / step - 1e-9)) + 1;
}

std::string decade_label(int exponent) {
  if (exponent >= -2 && exponent <= 3) return format_tick(std::pow(10.0, exponent), std::pow(10.0, exponent));
  return "1e" + std::to_string(exponent);
}

}  // namespace

std::string format_tick(double value, double step) {
  if (!std::isfinite(value)) return std::isnan(value) ? "NaN" : (value > 0 ? "inf" : "-inf");
  step = std::fabs(step);
  if (step == 0 || !std::isfinite(step)) step = std::fabs(value) > 0 ? std::fabs(value) : 1;
  if (std::fabs(value) < step * 1e-9) return "0";
  const double magnitude = std::max(std::fabs(value), step);
  const bool exponent_form = magnitude >= 1e6 || magnitude < 1e-4;
  std::string text = shortest(value, step * 1e-6, exponent_form);
  return text == "-0" ? "0" : text;
}

std::string format_value(double value) {
  if (!std::isfinite(value)) return std::isnan(value) ? "NaN" : (value > 0 ? "inf" : "-inf");
  char text[64];
  std::snprintf(text, sizeof text, "%.4g", value);
  return tidy_exponent(text);
}

Ticks linear_ticks(double lo, double hi, int target) {
  Ticks ticks;
  if (!std::isfinite(lo) || !std::isfinite(hi) || lo > hi) return ticks;
  target = std::max(target, 2);
  if (lo == hi) {
    ticks.values = {lo};
    ticks.labels = {format_tick(lo, std::fabs(lo) > 0 ? std::fabs(lo) / 10 : 1)};
    return ticks;
  }
  const double raw = (hi - lo) / target;
  const double base = std::floor(std::log10(raw));
  double best_step = 0;
  std::int64_t best_miss = std::numeric_limits<std::int64_t>::max();
  for (double k = base - 1; k <= base + 1; ++k) {
    for (double m : {1.0, 2.0, 2.5, 5.0}) {
      const double step = m * std::pow(10.0, k);
      const std::int64_t count = tick_count(lo, hi, step);
      if (count < std::max<std::int64_t>(2, target / 2)) continue;
      const std::int64_t miss = std::llabs(count - target);
      if (miss < best_miss) {  // on a tie the smaller step (more ticks) wins: it is seen first
        best_miss = miss;
        best_step = step;
      }
    }
  }
  if (best_step == 0) best_step = hi - lo;  // a range too narrow for doubles: its two ends
  ticks.step = best_step;
  const auto first = static_cast<std::int64_t>(std::ceil(lo / best_step - 1e-9));
  const auto last = static_cast<std::int64_t>(std::floor(hi / best_step + 1e-9));
  for (std::int64_t i = first; i <= last && ticks.values.size() < 1000; ++i) {
    double v = static_cast<double>(i) * best_step;
    if (std::fabs(v) < best_step * 1e-9) v = 0;
    ticks.values.push_back(v);
    ticks.labels.push_back(format_tick(v, best_step));
  }
  return ticks;
}

Ticks log_ticks(double lo, double hi, int target) {
  Ticks ticks;
  if (!std::isfinite(lo) || !std::isfinite(hi) || lo <= 0 || lo > hi) return ticks;
  target = std::max(target, 2);
  const int first = static_cast<int>(std::ceil(std::log10(lo) - 1e-9));
  const int last = static_cast<int>(std::floor(std::log10(hi) + 1e-9));
  const int decades = last - first + 1;
  if (decades >= 2) {
    const int every = std::max(1, (decades + target - 1) / target);
    ticks.step = every;
    std::vector<int> exponents;
    for (int e = first; e <= last; ++e) {
      if (((e % every) + every) % every == 0) exponents.push_back(e);
    }
    // One notation on an axis: "100, 1000, 1e4" reads worse than "1e2, 1e3, 1e4".
    const bool exponent_form =
        std::any_of(exponents.begin(), exponents.end(), [](int e) { return e < -2 || e > 3; });
    for (int e : exponents) {
      ticks.values.push_back(std::pow(10.0, e));
      ticks.labels.push_back(exponent_form ? (e == 0 ? std::string("1") : "1e" + std::to_string(e))
                                           : decade_label(e));
    }
    if (ticks.values.size() >= 2) return ticks;
    ticks = {};
  }
  // Within about one decade: 1, 2 and 5 times its powers of ten, else plain linear ticks.
  for (int e = first - 1; e <= last; ++e) {
    for (double m : {1.0, 2.0, 5.0}) {
      const double v = m * std::pow(10.0, e);
      if (v < lo * (1 - 1e-9) || v > hi * (1 + 1e-9)) continue;
      ticks.values.push_back(v);
      ticks.labels.push_back(format_tick(v, std::pow(10.0, e)));
    }
  }
  if (ticks.values.size() >= 2) return ticks;
  return linear_ticks(lo, hi, target);
}

Range padded_range(double lo, double hi, bool log_scale, int target) {
  if (!std::isfinite(lo) || !std::isfinite(hi) || lo > hi) return log_scale ? Range{1, 10} : Range{0, 1};
  if (log_scale) {
    if (lo <= 0) return {1, 10};
    double a = std::pow(10.0, std::floor(std::log10(lo) + 1e-9));
    double b = std::pow(10.0, std::ceil(std::log10(hi) - 1e-9));
    if (b <= a) b = a * 10;
    return {a, b};
  }
  if (lo == hi) {
    const double pad = lo == 0 ? 1 : std::fabs(lo) * 0.1;
    lo -= pad;
    hi += pad;
  }
  const Ticks ticks = linear_ticks(lo, hi, target);
  if (ticks.step <= 0) return {lo, hi};
  return {std::floor(lo / ticks.step + 1e-9) * ticks.step, std::ceil(hi / ticks.step - 1e-9) * ticks.step};
}

}  // namespace tfdebug::viz
