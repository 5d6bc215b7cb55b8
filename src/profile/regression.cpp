// Mann-Whitney U, Hodges-Lehmann shift and its distribution-free interval, severity grades.
#include "tfdebug/profile/regression.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "tfdebug/core/error.hpp"
#include "tfdebug/core/normal.hpp"

namespace tfdebug::profile {
namespace {

constexpr int kMaxExact = 20;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// The standard normal upper tail.
double normal_sf(double z) {
  return 0.5 * std::erfc(z / std::sqrt(2.0));
}

// Probabilities of U = 0..m*n under the null, by the recurrence
// p(m, n, u) = m/(m+n) p(m-1, n, u-n) + n/(m+n) p(m, n-1, u): the largest value comes from the
// first sample (and beats all n of the second) or from the second. That counts pairs where the
// first sample's value is larger; U and m*n - U have the same null distribution, so it is also
// the distribution of U as defined in the header.
std::vector<double> exact_distribution(int m, int n) {
  // table[i][j] is the distribution for sizes (i, j).
  std::vector<std::vector<std::vector<double>>> table(
      static_cast<std::size_t>(m + 1), std::vector<std::vector<double>>(static_cast<std::size_t>(n + 1)));
  for (int i = 0; i <= m; ++i) {
    for (int j = 0; j <= n; ++j) {
      auto& dist = table[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)];
      dist.assign((static_cast<std::size_t>(i) * static_cast<std::size_t>(j)) + 1, 0.0);
      if (i == 0 || j == 0) {
        dist[0] = 1.0;
        continue;
      }
      const auto& left = table[static_cast<std::size_t>(i - 1)][static_cast<std::size_t>(j)];
      const auto& down = table[static_cast<std::size_t>(i)][static_cast<std::size_t>(j - 1)];
      const double pi = static_cast<double>(i) / (i + j);
      const double pj = static_cast<double>(j) / (i + j);
      for (int u = 0; u <= i * j; ++u) {
        double p = 0;
        if (u - j >= 0 && u - j <= (i - 1) * j) p += pi * left[static_cast<std::size_t>(u - j)];
        if (u <= i * (j - 1)) p += pj * down[static_cast<std::size_t>(u)];
        dist[static_cast<std::size_t>(u)] = p;
      }
    }
  }
  return table[static_cast<std::size_t>(m)][static_cast<std::size_t>(n)];
}

void check_sample(std::span<const double> s, const char* which) {
  if (s.empty()) throw Error(std::string(which) + " sample is empty");
  for (const double v : s)
    if (!std::isfinite(v)) throw Error(std::string(which) + " sample holds a non-finite value");
}

}  // namespace

double mann_whitney_exact_cdf(int m, int n, int u) {
  if (m < 1 || n < 1 || m > kMaxExact || n > kMaxExact)
    throw Error("exact Mann-Whitney distribution needs 1 <= m, n <= 20");
  if (u < 0) return 0.0;
  const std::vector<double> dist = exact_distribution(m, n);
  double cdf = 0;
  for (int k = 0; k <= std::min(u, m * n); ++k) cdf += dist[static_cast<std::size_t>(k)];
  return std::min(cdf, 1.0);
}

MannWhitney mann_whitney(std::span<const double> x, std::span<const double> y) {
  check_sample(x, "first");
  check_sample(y, "second");
  const auto m = x.size();
  const auto n = y.size();
  MannWhitney result;
  bool ties_between = false;
  for (const double a : x) {
    for (const double b : y) {
      if (b > a) {
        result.u += 1;
      } else if (b == a) {
        result.u += 0.5;
        ties_between = true;
      }
    }
  }
  const double mn = static_cast<double>(m) * static_cast<double>(n);
  if (!ties_between && m <= kMaxExact && n <= kMaxExact) {
    const std::vector<double> dist = exact_distribution(static_cast<int>(m), static_cast<int>(n));
    const auto u = static_cast<std::size_t>(result.u);
    double lower = 0;
    double upper = 0;
    for (std::size_t k = 0; k < dist.size(); ++k) {
      if (k <= u) lower += dist[k];
      if (k >= u) upper += dist[k];
    }
    result.p_value = std::min(1.0, 2 * std::min(lower, upper));
    result.exact = true;
    return result;
  }
  // Tie correction over the pooled sample: sum of (t^3 - t) over groups of equal values.
  std::vector<double> pooled(x.begin(), x.end());
  pooled.insert(pooled.end(), y.begin(), y.end());
  std::sort(pooled.begin(), pooled.end());
  double tie_sum = 0;
  for (std::size_t i = 0; i < pooled.size();) {
    std::size_t j = i;
    while (j < pooled.size() && pooled[j] == pooled[i]) ++j;
    const auto t = static_cast<double>(j - i);
    tie_sum += t * t * t - t;
    i = j;
  }
  const auto total = static_cast<double>(m + n);
  const double variance = mn / 12.0 * ((total + 1) - tie_sum / (total * (total - 1)));
  if (variance <= 0) {  // every value equal
    result.p_value = 1.0;
    return result;
  }
  const double distance = std::max(0.0, std::fabs(result.u - mn / 2) - 0.5);
  result.p_value = std::min(1.0, 2 * normal_sf(distance / std::sqrt(variance)));
  return result;
}

SampleComparison compare_samples(std::span<const double> baseline, std::span<const double> current,
                                 double confidence) {
  if (!(confidence > 0 && confidence < 1)) throw Error("confidence must be between 0 and 1");
  SampleComparison c;
  c.test = mann_whitney(baseline, current);
  c.confidence = confidence;
  c.n_baseline = baseline.size();
  c.n_current = current.size();
  c.baseline_median = median({baseline.begin(), baseline.end()});
  c.current_median = median({current.begin(), current.end()});
  const double mn = static_cast<double>(baseline.size()) * static_cast<double>(current.size());
  c.effect = 2 * c.test.u / mn - 1;
  std::vector<double> diffs;
  diffs.reserve(baseline.size() * current.size());
  for (const double a : baseline)
    for (const double b : current) diffs.push_back(b - a);
  std::sort(diffs.begin(), diffs.end());
  c.shift = median(diffs);
  // The interval is [d_(k), d_(N+1-k)] (1-based), k the largest with P(U <= k-1) <= alpha/2.
  const double alpha = 1 - confidence;
  const auto count = static_cast<long long>(diffs.size());
  long long k = 0;
  const auto m = static_cast<int>(baseline.size());
  const auto n = static_cast<int>(current.size());
  if (m <= kMaxExact && n <= kMaxExact) {
    const std::vector<double> dist = exact_distribution(m, n);
    double cdf = 0;
    while (k < count && cdf + dist[static_cast<std::size_t>(k)] <= alpha / 2) {
      cdf += dist[static_cast<std::size_t>(k)];
      ++k;
    }
  } else {
    const double z = normal_quantile(1 - alpha / 2, /*refine=*/true);
    k = static_cast<long long>(std::floor(mn / 2 - z * std::sqrt(mn * (m + n + 1) / 12.0)));
  }
  // Too few samples for this confidence: the interval is the whole range of differences.
  k = std::clamp(k, 1LL, count);
  const double low = diffs[static_cast<std::size_t>(k - 1)];
  const double high = diffs[static_cast<std::size_t>(count - k)];
  if (c.baseline_median != 0) {
    c.change = c.current_median / c.baseline_median - 1;
    c.change_low = low / c.baseline_median;
    c.change_high = high / c.baseline_median;
  }
  return c;
}

Severity grade(const SampleComparison& c, double alpha, double threshold) {
  if (c.test.p_value >= alpha) return Severity::kUnchanged;
  if (c.change < 0) return Severity::kImproved;
  if (c.change < threshold) return Severity::kNegligible;
  if (c.change < 2 * threshold) return Severity::kMinor;
  if (c.change < 4 * threshold) return Severity::kMajor;
  return Severity::kCritical;
}

const char* severity_name(Severity severity) {
  switch (severity) {
    case Severity::kUnchanged:
      return "unchanged";
    case Severity::kImproved:
      return "improved";
    case Severity::kNegligible:
      return "negligible";
    case Severity::kMinor:
      return "minor";
    case Severity::kMajor:
      return "major";
    case Severity::kCritical:
      return "critical";
  }
  return "unchanged";
}

}  // namespace tfdebug::profile
