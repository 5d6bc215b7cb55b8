#include "tfdebug/core/phase.hpp"

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

std::optional<Phase> parse_phase(std::string_view name) noexcept {
  for (const Phase phase : {Phase::forward, Phase::backward, Phase::optimizer}) {
    if (phase_name(phase) == name) return phase;
  }
  return std::nullopt;
}

}  // namespace tfdebug
