// Findings: what a rule concludes about a run, with where (step, phase, module, op), what
// (message and the rule's evidence) and what to do (suggestion). A Session deduplicates them:
// one Finding per rule + module + op, holding the first occurrence and how often it recurred.
//
//   for (const tfdebug::Finding& f : session.findings())
//     if (f.severity == tfdebug::Severity::error)
//       std::printf("%s at step %lld in %s (%s)\n", f.rule.c_str(), (long long)f.step,
//                   f.module.c_str(), f.op.c_str());
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tfdebug/session/observation.hpp"

namespace tfdebug {

enum class Severity : std::uint8_t { info, warning, error };
// "info", "warning", "error".
std::string_view severity_name(Severity severity) noexcept;

struct Finding {
  std::string rule;  // "nonfinite", "dead_units", ... (docs/rules.md)
  Severity severity = Severity::warning;
  std::int64_t step = 0;  // the first step the rule tripped here
  Phase phase = Phase::forward;
  std::string module;
  std::string op;
  std::string message;     // what happened, in one sentence
  std::string suggestion;  // what to try
  // Rule-specific numbers of the first occurrence (some rules update them, e.g. nonfinite's
  // "propagators"), in insertion order: {"nan", 3}, {"ratio_to_history", 42.1}, ...
  std::vector<std::pair<std::string, double>> evidence;
  std::int64_t count = 1;      // steps (or observations) at which it tripped
  std::int64_t last_step = 0;  // the latest of them

  // The evidence value named `key`, or NaN when there is none.
  double evidence_value(std::string_view key) const noexcept;
};

}  // namespace tfdebug
