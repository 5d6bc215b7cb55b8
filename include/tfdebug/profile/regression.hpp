// Regression detection between two sets of timing samples (benchmark repetitions): is the
// current run slower than the baseline, by how much, and how sure are we? Behind
// `tfdebug regress` (docs/profiling.md).
//
//   std::vector<double> before = {10.1, 10.3, 9.9, 10.0, 10.2};
//   std::vector<double> after = {11.0, 11.2, 10.9, 11.1, 11.3};
//   tfdebug::profile::SampleComparison c = tfdebug::profile::compare_samples(before, after);
//   // c.change ~ +0.09 (medians), c.p_value 0.0079 (exact), c.effect +1 (every after > before)
//
// The test is the two-sided Mann-Whitney U test (Wilcoxon rank-sum): exact when both samples
// have at most 20 values and no value is shared between them; otherwise the normal
// approximation with tie correction and continuity correction (as scipy's default). The
// confidence interval is the distribution-free one for the Hodges-Lehmann shift (pairwise
// differences between the samples, cut at the U distribution's quantiles), divided by the
// baseline median.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace tfdebug::profile {

struct MannWhitney {
  double u = 0;        // U of the second sample: pairs (x, y) with y > x, ties counting 1/2
  double p_value = 1;  // two-sided
  bool exact = false;
};

MannWhitney mann_whitney(std::span<const double> x, std::span<const double> y);

// P(U <= u) for samples of sizes m and n with no ties (exact null distribution); m, n <= 20.
double mann_whitney_exact_cdf(int m, int n, int u);

struct SampleComparison {
  std::size_t n_baseline = 0;
  std::size_t n_current = 0;
  double baseline_median = 0;
  double current_median = 0;
  double change = 0;      // current_median / baseline_median - 1
  double shift = 0;       // Hodges-Lehmann estimate of current - baseline
  double change_low = 0;  // confidence interval of shift / baseline_median
  double change_high = 0;
  double confidence = 0.95;
  double effect = 0;  // Cliff's delta in [-1, 1]: P(current > baseline) - P(current < baseline)
  MannWhitney test;
};

// Throws tfdebug::Error if either sample is empty or holds a non-finite value.
SampleComparison compare_samples(std::span<const double> baseline, std::span<const double> current,
                                 double confidence = 0.95);

enum class Severity { kUnchanged, kImproved, kNegligible, kMinor, kMajor, kCritical };

// unchanged: p >= alpha. improved: significantly faster. A significant slowdown is negligible
// below `threshold` (a fraction, 0.05 = 5%), minor below 2x threshold, major below 4x, critical
// beyond.
Severity grade(const SampleComparison& comparison, double alpha, double threshold);
const char* severity_name(Severity severity);

}  // namespace tfdebug::profile
