// Which units of an output had a non-zero value: what the dead_units rule measures, and what the
// per-step metrics report as a module's dead fraction. The units are one dimension of the output
// (Observation::unit_dim): the last for linear layers' features, dimension 1 for the channels of
// convolutions (N, C, H, W). Private to tfdebug::session.
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

// The dimension of `value` that holds its units: `unit_dim` (Observation::unit_dim), or the last
// when it is -1 or out of range.
int unit_dimension(const TensorView& value, int unit_dim) noexcept;

// Unit activity of `value` (rank >= 2) along `dim` (unit_dimension): a unit is active when any of
// its values over the other dimensions is not +-0. When no value is +-0 and none is NaN/Inf
// (`any_zero` false, `finite` true), every unit is active and the tensor is not read again.
UnitActivity unit_activity(TensorView value, int dim, bool any_zero, bool finite);

}  // namespace tfdebug::detail
