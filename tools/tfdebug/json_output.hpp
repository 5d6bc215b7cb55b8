// JSON forms of core results, shared by every subcommand's --json output.
// Non-finite numbers (NaN, +-Inf) are written as null: JSON has no literal for them.
#pragma once

#include <nlohmann/json.hpp>

#include "tfdebug/core/histogram.hpp"
#include "tfdebug/core/stats.hpp"
#include "tfdebug/session/finding.hpp"

namespace tfdebug::cli {

// A number, or null when it is NaN or infinite.
nlohmann::json json_number(double x);

nlohmann::json to_json(const Stats& stats);
nlohmann::json to_json(const TargetFit& fit);
nlohmann::json to_json(const Histogram& histogram);
// A finding's evidence value: a number (an integer when it is one; null when not finite), a list
// of integers, or text.
nlohmann::json to_json(const EvidenceValue& value);

}  // namespace tfdebug::cli
