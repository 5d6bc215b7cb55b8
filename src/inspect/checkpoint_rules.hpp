// The checkpoint rules of docs/inspect.md, on one tensor's scan. Private to tfdebug::inspect.
#pragma once

#include <vector>

#include "tensor_scan.hpp"
#include "tfdebug/io/model_file.hpp"
#include "tfdebug/session/finding.hpp"

namespace tfdebug::inspect::detail {

// Thresholds of the rules; documented in docs/inspect.md.
inline constexpr double kOutlierRowRatio = 20.0;  // row abs-max over the median row abs-max
inline constexpr int kMaxListed = 16;             // rows/columns listed in evidence
// init_scale: std * sqrt(fan_in) of a weight matrix. Standard initialisations give 0.3-1.4
// (PyTorch's default 1/sqrt(3), LeCun 1, He sqrt(2), GPT-2's 0.02 at fan-in 768-4096 gives
// 0.55-1.3); training moves it by small factors. Beyond these bounds activations grow or
// vanish by that factor per layer.
inline constexpr double kInitRatioHigh = 8.0;
inline constexpr double kInitRatioLow = 0.02;
inline constexpr std::int64_t kInitMinSide = 16;  // smaller matrices are too small to judge

// A Finding about tensor `name`: op = the name, module = the name up to its last '.'.
Finding tensor_finding(const std::string& rule, Severity severity, const std::string& name,
                       std::string message, std::string suggestion);

// nonfinite, all_zero / constant, target_overflow / target_underflow, and the matrix rules
// (dead_embedding_rows / dead_output_units, init_scale, dead_input_units, outlier_channels).
void tensor_rules(const io::NamedTensor& t, const TensorScan& scan, std::vector<Finding>& findings);

}  // namespace tfdebug::inspect::detail
