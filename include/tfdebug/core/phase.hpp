// Phase: which part of a training step a tensor or an op belongs to. Shared vocabulary of every
// area (the Session's observations and findings, the op profiler's rows, the traces).
//
//   tfdebug::Phase phase = tfdebug::Phase::backward;
//   std::printf("%s\n", std::string(tfdebug::phase_name(phase)).c_str());   // "backward"
//   auto parsed = tfdebug::parse_phase("optimizer");                         // Phase::optimizer
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace tfdebug {

enum class Phase : std::uint8_t {
  forward,    // the forward pass (also the forward of a second micro-batch)
  backward,   // ops the autograd engine runs, and gradients
  optimizer,  // the optimizer's step: what runs after backward without grad mode
};

// "forward", "backward", "optimizer".
std::string_view phase_name(Phase phase) noexcept;
// The inverse of phase_name; nullopt for any other text.
std::optional<Phase> parse_phase(std::string_view name) noexcept;

}  // namespace tfdebug
