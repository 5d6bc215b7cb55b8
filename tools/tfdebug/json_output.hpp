// JSON forms of core results, shared by every subcommand's --json output.
// Non-finite numbers (NaN, +-Inf) are written as null: JSON has no literal for them.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "tfdebug/core/histogram.hpp"
#include "tfdebug/core/stats.hpp"
#include "tfdebug/session/finding.hpp"

namespace tfdebug::cli {

// A number, or null when it is NaN or infinite.
nlohmann::json json_number(double x);

// Note [JSON of invalid UTF-8]: JSON text is Unicode, but a name in a file may hold any bytes.
// Every JSON document the CLI writes goes through json_text, which writes each invalid UTF-8
// sequence (its maximal subpart, see tfdebug/core/utf8.hpp) as U+FFFD, the same text as
// Python's bytes.decode("utf-8", "replace"); valid text, control characters included, is kept
// (JSON escapes those itself). nlohmann's plain dump() would throw on such a name instead.
std::string json_text(const nlohmann::json& j, int indent = 2);

nlohmann::json to_json(const Stats& stats);
nlohmann::json to_json(const TargetFit& fit);
nlohmann::json to_json(const Histogram& histogram);
// A finding's evidence value: a number (an integer when it is one; null when not finite), a list
// of integers, or text.
nlohmann::json to_json(const EvidenceValue& value);

}  // namespace tfdebug::cli
