// A test's view of a run's findings: one line each (severity, rule, step, phase, module, op,
// message), for failure messages.
#pragma once

#include <string>
#include <vector>

#include "tfdebug/core/phase.hpp"
#include "tfdebug/session/finding.hpp"

namespace tfdebug::testing {

inline std::string findings_text(const std::vector<Finding>& findings) {
  std::string text;
  for (const Finding& f : findings) {
    text += "  " + std::string(severity_name(f.severity)) + " " + f.rule + " @" + std::to_string(f.step) +
            " " + std::string(phase_name(f.phase)) + " '" + f.module + "' " + f.op + ": " + f.message + "\n";
  }
  return text;
}

}  // namespace tfdebug::testing
