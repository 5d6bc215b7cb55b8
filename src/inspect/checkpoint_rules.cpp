#include "checkpoint_rules.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <span>
#include <string>

#include "tfdebug/io/model_names.hpp"

namespace tfdebug::inspect::detail {

namespace {

std::string count_of(std::int64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// Seven significant digits: "0.02", "1.5e+04", "nan".
std::string number_text(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buffer[64];
  const int n = std::snprintf(buffer, sizeof buffer, "%.7g", value);
  return std::string(buffer, static_cast<std::size_t>(n));
}

std::vector<std::int64_t> unravel(std::int64_t flat, std::span<const std::int64_t> shape) {
  std::vector<std::int64_t> index(shape.size());
  for (std::size_t d = shape.size(); d-- > 0;) {
    index[d] = shape[d] > 0 ? flat % shape[d] : 0;
    flat = shape[d] > 0 ? flat / shape[d] : 0;
  }
  return index;
}

std::string index_text(const std::vector<std::int64_t>& index) {
  std::string s = "[";
  for (std::size_t i = 0; i < index.size(); ++i) s += (i ? ", " : "") + std::to_string(index[i]);
  return s + "]";
}

std::vector<std::int64_t> first_listed(const std::vector<std::int64_t>& all) {
  return {all.begin(), all.begin() + std::ptrdiff_t(std::min<std::size_t>(all.size(), kMaxListed))};
}

// The target dtype's fit, as evidence.
std::vector<Evidence> target_evidence(const TargetFit& fit) {
  return {{"dtype", std::string(dtype_name(fit.dtype))},
          {"range_used", fit.range_used},
          {"overflow", fit.overflow},
          {"underflow", fit.underflow},
          {"subnormal", fit.subnormal},
          {"overflow_fraction", fit.overflow_fraction},
          {"underflow_fraction", fit.underflow_fraction}};
}

void matrix_rules(const io::NamedTensor& t, const TensorScan& scan, std::vector<Finding>& findings) {
  if (!scan.matrix) return;
  const Stats& s = scan.stats;
  const std::int64_t rows = t.shape()[0];
  const std::int64_t cols = t.shape()[1];
  const std::vector<double>& row_abs_max = scan.row_abs_max;
  std::vector<std::int64_t> dead_rows = scan.dead_rows;
  std::sort(dead_rows.begin(), dead_rows.end());
  const bool embedding = io::is_embedding_name(t.name);
  if (!dead_rows.empty() && static_cast<std::int64_t>(dead_rows.size()) < rows) {
    Finding f = tensor_finding(
        embedding ? "dead_embedding_rows" : "dead_output_units", Severity::warning, t.name,
        std::to_string(dead_rows.size()) + " of " + std::to_string(rows) + " rows are all zero",
        embedding ? "these tokens were never trained (or were zeroed); check the vocabulary and data"
                  : "these output units can never activate; check initialisation, dropout masks or pruning");
    f.evidence = {{"rows", first_listed(dead_rows)}, {"count", dead_rows.size()}};
    findings.push_back(std::move(f));
  }
  if (!embedding && !io::is_norm_name(t.name) && rows >= kInitMinSide && cols >= kInitMinSide &&
      s.finite() == s.count && s.std > 0) {
    const double expected = 1.0 / std::sqrt(static_cast<double>(cols));
    const double ratio = s.std / expected;
    if (ratio > kInitRatioHigh || ratio < kInitRatioLow) {
      char buffer[160];
      std::snprintf(buffer, sizeof buffer, "std %s is %.3gx what fan-in %lld implies (1/sqrt(%lld) = %s)",
                    number_text(s.std).c_str(), ratio, static_cast<long long>(cols),
                    static_cast<long long>(cols), number_text(expected).c_str());
      Finding f = tensor_finding("init_scale", Severity::warning, t.name, buffer,
                                 ratio > kInitRatioHigh ? "weights this large amplify activations layer by "
                                                          "layer: check the init gain or a missing scale"
                                                        : "weights this small pass almost no signal: check "
                                                          "the init, weight decay or a collapsed layer");
      f.evidence = {{"std", s.std}, {"fan_in", cols}, {"expected_std", expected}, {"ratio", ratio}};
      findings.push_back(std::move(f));
    }
  }
  const std::vector<std::int64_t>& dead_cols = scan.dead_columns;
  if (s.zero >= rows && !embedding && !dead_cols.empty() &&
      static_cast<std::int64_t>(dead_cols.size()) < cols) {
    Finding f = tensor_finding(
        "dead_input_units", Severity::warning, t.name,
        std::to_string(dead_cols.size()) + " of " + std::to_string(cols) + " columns are all zero",
        "the inputs feeding these columns are ignored; check the layer before (dead ReLUs?)");
    f.evidence = {{"columns", first_listed(dead_cols)}, {"count", dead_cols.size()}};
    findings.push_back(std::move(f));
  }
  std::vector<double> sorted = row_abs_max;
  std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(sorted.size() / 2),
                   sorted.end());
  const double median = sorted[sorted.size() / 2];
  if (median > 0 && rows >= 8) {
    std::vector<std::int64_t> outliers;
    double worst = 0;
    for (std::int64_t r = 0; r < rows; ++r) {
      const double ratio = row_abs_max[static_cast<std::size_t>(r)] / median;
      if (ratio > kOutlierRowRatio) outliers.push_back(r);
      worst = std::max(worst, ratio);
    }
    if (!outliers.empty()) {
      char buffer[64];
      std::snprintf(buffer, sizeof buffer, "%.1f", worst);
      Finding f = tensor_finding(
          "outlier_channels", Severity::warning, t.name,
          count_of(static_cast<std::int64_t>(outliers.size()), "row reaches", "rows reach") + " " + buffer +
              "x the median row's abs-max",
          "outlier channels dominate the quantisation scale: consider per-channel scales or clipping");
      f.evidence = {{"rows", first_listed(outliers)}, {"ratio", worst}, {"median_row_abs_max", median}};
      findings.push_back(std::move(f));
    }
  }
}

}  // namespace

Finding tensor_finding(const std::string& rule, Severity severity, const std::string& name,
                       std::string message, std::string suggestion) {
  Finding f;
  f.rule = rule;
  f.severity = severity;
  const auto dot = name.rfind('.');
  f.module = dot == std::string::npos ? std::string() : name.substr(0, dot);
  f.op = name;
  f.message = std::move(message);
  f.suggestion = std::move(suggestion);
  return f;
}

void tensor_rules(const io::NamedTensor& t, const TensorScan& scan, std::vector<Finding>& findings) {
  const Stats& s = scan.stats;
  if (s.nonfinite() > 0) {
    const auto index = unravel(scan.first_nonfinite, t.shape());
    Finding f = tensor_finding(
        "nonfinite", Severity::error, t.name,
        std::to_string(s.nan) + " NaN, " + std::to_string(s.pos_inf) + " +Inf, " + std::to_string(s.neg_inf) +
            " -Inf; first at " + index_text(index),
        "the checkpoint was saved after training diverged, or was corrupted: restore an earlier one");
    f.evidence = {{"nan", s.nan}, {"pos_inf", s.pos_inf}, {"neg_inf", s.neg_inf}, {"index", index}};
    findings.push_back(std::move(f));
  }
  if (s.count > 1 && s.finite() == s.count && s.min == s.max) {
    const bool zeros = s.min == 0;
    Finding f =
        tensor_finding(zeros ? "all_zero" : "constant", zeros ? Severity::warning : Severity::info, t.name,
                       zeros ? "every value is zero" : "every value is " + number_text(s.min),
                       zeros ? "an all-zero weight passes no signal: was it ever trained or loaded?"
                             : "fine for a fresh norm weight or bias; suspicious for a trained projection");
    f.evidence = {{"value", s.min}};
    findings.push_back(std::move(f));
  }
  if (s.target && s.target->overflow > 0) {
    Finding f = tensor_finding(
        "target_overflow", Severity::error, t.name,
        count_of(s.target->overflow, "value exceeds", "values exceed") + " " +
            std::string(dtype_name(s.target->dtype)) + "'s largest finite value (abs max " +
            number_text(s.abs_max) + ")",
        "casting to this dtype saturates or overflows these values: scale the tensor or keep it wider");
    f.evidence = target_evidence(*s.target);
    findings.push_back(std::move(f));
  } else if (s.target && s.target->underflow_fraction > 0.01) {
    Finding f = tensor_finding("target_underflow", Severity::warning, t.name,
                               number_text(100 * s.target->underflow_fraction) +
                                   "% of values flush to zero in " + std::string(dtype_name(s.target->dtype)),
                               "small values vanish in this dtype: use a per-tensor scale");
    f.evidence = target_evidence(*s.target);
    findings.push_back(std::move(f));
  }
  matrix_rules(t, scan, findings);
}

}  // namespace tfdebug::inspect::detail
