// Findings: what a rule concludes, with where (step, phase, module, op), what (message and the
// rule's evidence) and what to do (suggestion). One type for the whole project: the live rules of
// a Session, the checkpoint rules of tfdebug::inspect, and every later analysis report Findings.
// A Session deduplicates them: one Finding per rule + severity + module + op, holding the first
// occurrence, how often it recurred, the latest occurrence and the worst one (a layer that goes
// from 12% to 100% dead says so: Finding::worst, with the step it got there).
//
//   for (const tfdebug::Finding& f : session.findings())
//     if (f.severity == tfdebug::Severity::error)
//       std::printf("%s at step %lld in %s (%s): %g NaN\n", f.rule.c_str(), (long long)f.step,
//                   f.module.c_str(), f.op.c_str(), f.evidence_value("nan"));
//
// Evidence is a list of named values, each a number, a list of integers (rows, an index) or text:
//
//   f.evidence = {{"ratio", 42.1}, {"rows", std::vector<std::int64_t>{3, 17}}, {"same_as", "wte"}};
#pragma once

#include <concepts>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "tfdebug/core/phase.hpp"

namespace tfdebug {

enum class Severity : std::uint8_t { info, warning, error };
// "info", "warning", "error".
std::string_view severity_name(Severity severity) noexcept;

// A number (NaN and Inf allowed: written as null in JSON), a list of integers, or text.
using EvidenceValue = std::variant<double, std::vector<std::int64_t>, std::string>;

struct Evidence {
  std::string key;
  EvidenceValue value;

  Evidence(std::string k, double v) : key(std::move(k)), value(v) {}
  // Counts are numbers too (exact up to 2^53).
  template <std::integral T>
  Evidence(std::string k, T v) : key(std::move(k)), value(static_cast<double>(v)) {}
  Evidence(std::string k, std::vector<std::int64_t> v) : key(std::move(k)), value(std::move(v)) {}
  Evidence(std::string k, std::string v) : key(std::move(k)), value(std::move(v)) {}
  Evidence(std::string k, const char* v) : key(std::move(k)), value(std::string(v)) {}
};

// One occurrence of a deduplicated finding: its step, message, evidence and magnitude.
struct Occurrence {
  std::int64_t step = 0;
  std::string message;
  std::vector<Evidence> evidence;
  double magnitude = 0;
};

struct Finding {
  std::string rule;  // "nonfinite", "dead_units", ... (docs/rules.md, docs/inspect.md)
  Severity severity = Severity::warning;
  std::int64_t step = 0;  // the first step the rule tripped here (0 for a checkpoint)
  Phase phase = Phase::forward;
  std::string module;      // module path; for a checkpoint, the tensor's name up to its last '.'
  std::string op;          // op name; for parameters and checkpoint tensors, the tensor's full name
  std::string message;     // what happened, in one sentence
  std::string suggestion;  // what to try
  // Rule-specific values of the first occurrence (some rules update them, e.g. nonfinite's
  // "propagators"), in insertion order: {"nan", 3}, {"ratio_to_history", 42.1}, ...
  std::vector<Evidence> evidence;
  std::int64_t count = 1;      // steps (or observations) at which it tripped
  std::int64_t last_step = 0;  // the latest of them
  // How bad this occurrence is, on the rule's own scale (dead_units: the dead fraction;
  // update_ratio: decades outside its band; docs/rules.md says each rule's): a Session keeps the
  // worst occurrence by it. NaN: the rule does not rank its occurrences.
  double magnitude = std::numeric_limits<double>::quiet_NaN();
  // Set by a Session when the finding recurred: the latest occurrence (a later step than `step`),
  // and the worst one when it is worse than the first (a larger magnitude).
  std::optional<Occurrence> latest;
  std::optional<Occurrence> worst;

  // The number named `key`, or NaN when there is none (or it is not a number).
  double evidence_value(std::string_view key) const noexcept;
  // The value named `key`, or nullptr.
  const EvidenceValue* find_evidence(std::string_view key) const noexcept;
  EvidenceValue* find_evidence(std::string_view key) noexcept;
};

}  // namespace tfdebug
