// Which units of an output (its last dimension) had a non-zero value: what the dead_units rule
// measures, and what the per-step metrics report as a module's dead fraction. Private to
// tfdebug::session.
#pragma once

#include <cstdint>
#include <vector>

#include "tfdebug/core/tensor_view.hpp"

namespace tfdebug::detail {

struct UnitActivity {
  std::vector<std::uint8_t> active;  // 1 per unit with a non-zero value
  std::int64_t all_active = 0;       // instead, this many units, every one active
  std::int64_t units() const noexcept { return active.empty() ? all_active : std::int64_t(active.size()); }
};

// Unit activity of `value` (rank >= 2): a unit is active when any of its values over the batch
// and token dimensions is not +-0. When no value is +-0 and none is NaN/Inf (`any_zero` false,
// `finite` true), every unit is active and the tensor is not read again.
UnitActivity unit_activity(TensorView value, bool any_zero, bool finite);

}  // namespace tfdebug::detail
