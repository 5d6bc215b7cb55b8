#include "tfdebug/session/finding.hpp"

#include <limits>

namespace tfdebug {

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

const EvidenceValue* Finding::find_evidence(std::string_view key) const noexcept {
  for (const Evidence& e : evidence) {
    if (e.key == key) return &e.value;
  }
  return nullptr;
}

EvidenceValue* Finding::find_evidence(std::string_view key) noexcept {
  for (Evidence& e : evidence) {
    if (e.key == key) return &e.value;
  }
  return nullptr;
}

double Finding::evidence_value(std::string_view key) const noexcept {
  const EvidenceValue* value = find_evidence(key);
  const double* number = value != nullptr ? std::get_if<double>(value) : nullptr;
  return number != nullptr ? *number : std::numeric_limits<double>::quiet_NaN();
}

}  // namespace tfdebug
