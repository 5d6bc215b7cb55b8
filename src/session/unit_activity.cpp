#include "unit_activity.hpp"

#include "tfdebug/core/error.hpp"
#include "tfdebug/core/stats.hpp"
#include "tfdebug/core/tensor.hpp"

namespace tfdebug::detail {

int unit_dimension(const TensorView& value, int unit_dim) noexcept {
  const int last = int(value.rank()) - 1;
  return unit_dim < 0 || unit_dim > last ? last : unit_dim;
}

// Units last: column_nonzero over the [rows, units] view, in one core pass with no copy for
// contiguous outputs (a transposed [units, rows] view would be strided, which column_nonzero
// copies). Units inside (channels, N x C x S): row_summaries over the [N * C, S] view says which
// rows are all zero; a channel is active when one of its N rows is not.
UnitActivity unit_activity(TensorView value, int dim, bool any_zero, bool finite) {
  UnitActivity out;
  TFDEBUG_DASSERT(value.rank() >= 2 && dim >= 0 && dim < int(value.rank()) && value.shape(dim) > 0,
                  "unit activity of an output without units");
  const std::int64_t units = value.shape(dim);
  if (!any_zero && finite) {
    out.all_active = units;
    return out;
  }
  Tensor copy;
  if (!value.is_contiguous()) {
    copy = Tensor::copy_of(value);
    value = copy.view();
  }
  out.active.assign(static_cast<std::size_t>(units), 0);
  std::int64_t outer = 1;  // the dimensions before the units
  for (int d = 0; d < dim; ++d) outer *= value.shape(d);
  const std::int64_t inner = value.numel() / (outer * units);  // and after them
  if (inner == 1) {
    column_nonzero(TensorView(value.data(), value.dtype(), {outer, units}), out.active.data());
    return out;
  }
  const std::int64_t rows = outer * units;
  std::vector<double> abs_max(static_cast<std::size_t>(rows));
  std::vector<std::uint8_t> row_zero(static_cast<std::size_t>(rows));
  std::vector<std::uint8_t> columns(static_cast<std::size_t>(inner));
  row_summaries(TensorView(value.data(), value.dtype(), {rows, inner}), abs_max.data(), row_zero.data(),
                columns.data());
  for (std::int64_t r = 0; r < rows; ++r) {
    if (row_zero[std::size_t(r)] == 0) out.active[std::size_t(r % units)] = 1;
  }
  return out;
}

}  // namespace tfdebug::detail
