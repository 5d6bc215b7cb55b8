#include "unit_activity.hpp"

#include "tfdebug/core/error.hpp"
#include "tfdebug/core/stats.hpp"
#include "tfdebug/core/tensor.hpp"

namespace tfdebug::detail {

// column_nonzero over the [rows, units] view, in one core pass with no copy for contiguous
// outputs (a transposed [units, rows] view would be strided, which column_nonzero copies).
UnitActivity unit_activity(TensorView value, bool any_zero, bool finite) {
  UnitActivity out;
  TFDEBUG_DASSERT(value.rank() >= 2 && value.shape(value.rank() - 1) > 0,
                  "unit activity of an output without units");
  const std::int64_t units = value.shape(value.rank() - 1);
  if (!any_zero && finite) {
    out.all_active = units;
    return out;
  }
  const std::int64_t rows = value.numel() / units;
  Tensor copy;
  if (!value.is_contiguous()) {
    copy = Tensor::copy_of(value);
    value = copy.view();
  }
  out.active.assign(static_cast<std::size_t>(units), 0);
  column_nonzero(TensorView(value.data(), value.dtype(), {rows, units}), out.active.data());
  return out;
}

}  // namespace tfdebug::detail
