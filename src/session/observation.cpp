#include "tfdebug/session/observation.hpp"

#include <cmath>
#include <limits>

#include "tfdebug/session/finding.hpp"

namespace tfdebug {

std::string_view phase_name(Phase phase) noexcept {
  switch (phase) {
    case Phase::forward:
      return "forward";
    case Phase::backward:
      return "backward";
    case Phase::optimizer:
      return "optimizer";
  }
  return "unknown";
}

std::string_view role_name(Role role) noexcept {
  switch (role) {
    case Role::output:
      return "output";
    case Role::parameter:
      return "parameter";
    case Role::gradient:
      return "gradient";
    case Role::update:
      return "update";
  }
  return "unknown";
}

std::string_view severity_name(Severity severity) noexcept {
  switch (severity) {
    case Severity::info:
      return "info";
    case Severity::warning:
      return "warning";
    case Severity::error:
      return "error";
  }
  return "unknown";
}

double Finding::evidence_value(std::string_view key) const noexcept {
  for (const auto& [name, value] : evidence) {
    if (name == key) return value;
  }
  return std::numeric_limits<double>::quiet_NaN();
}

}  // namespace tfdebug
