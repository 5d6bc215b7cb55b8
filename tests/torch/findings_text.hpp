// A test's view of a run's findings: one line each (severity, rule, step, phase, module, op,
// message), for failure messages; and the first finding of a rule.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "tfdebug/core/phase.hpp"
#include "tfdebug/session/finding.hpp"

namespace tfdebug::testing {

// The first finding of `rule`, nullptr when none.
inline const Finding* first_finding(const std::vector<Finding>& findings, std::string_view rule) {
  for (const Finding& f : findings) {
    if (f.rule == rule) return &f;
  }
  return nullptr;
}

inline std::string findings_text(const std::vector<Finding>& findings) {
  std::string text;
  for (const Finding& f : findings) {
    text += "  " + std::string(severity_name(f.severity)) + " " + f.rule + " @" + std::to_string(f.step) +
            " " + std::string(phase_name(f.phase)) + " '" + f.module + "' " + f.op + ": " + f.message + "\n";
  }
  return text;
}

}  // namespace tfdebug::testing
