#include "tfdebug/core/tensor_view.hpp"

#include <type_traits>

#include "tfdebug/core/error.hpp"

namespace tfdebug {

static_assert(std::is_trivially_copyable_v<TensorView>, "TensorView is passed by value");

namespace {

void check_rank(std::size_t rank) {
  if (rank > static_cast<std::size_t>(kMaxRank)) {
    throw Error("tensor rank " + std::to_string(rank) + " exceeds the supported maximum of " +
                std::to_string(kMaxRank));
  }
}

void check_dim(int dim, int rank, const char* what) {
  if (dim < 0 || dim >= rank) {
    throw Error(std::string(what) + ": dimension " + std::to_string(dim) +
                " is out of range for a tensor of rank " + std::to_string(rank));
  }
}

}  // namespace

std::int64_t checked_numel(std::span<const std::int64_t> shape, std::string_view what) {
  std::int64_t n = 1;
  for (std::int64_t dim : shape) {
    if (dim < 0) throw Error(std::string(what) + ": negative dimension " + std::to_string(dim) + " in shape");
    if (__builtin_mul_overflow(n, dim, &n)) {
      throw Error(std::string(what) + ": the product of the shape overflows a 64-bit element count");
    }
  }
  return n;
}

std::array<std::int64_t, kMaxRank> contiguous_strides(std::span<const std::int64_t> shape) {
  check_rank(shape.size());
  std::array<std::int64_t, kMaxRank> strides{};
  std::int64_t stride = 1;
  for (std::size_t i = shape.size(); i-- > 0;) {
    strides[i] = stride;
    // Only an empty tensor (a zero dimension elsewhere) can overflow here, e.g. [0, 2^40, 2^40]:
    // its strides are never used to address anything, so they saturate to 0. Found by
    // fuzz/gguf_fuzz.cpp.
    if (__builtin_mul_overflow(stride, shape[i] > 0 ? shape[i] : 1, &stride)) stride = 0;
  }
  return strides;
}

TensorView::TensorView(const void* data, DType dtype, std::span<const std::int64_t> shape)
    : data_(static_cast<const std::byte*>(data)), dtype_(dtype), rank_(static_cast<int>(shape.size())) {
  check_rank(shape.size());
  checked_numel(shape, "tensor view");
  for (std::size_t i = 0; i < shape.size(); ++i) shape_[i] = shape[i];
  strides_ = contiguous_strides(shape);
}

TensorView::TensorView(const void* data, DType dtype, std::span<const std::int64_t> shape,
                       std::span<const std::int64_t> strides)
    : data_(static_cast<const std::byte*>(data)), dtype_(dtype), rank_(static_cast<int>(shape.size())) {
  check_rank(shape.size());
  if (strides.size() != shape.size()) {
    throw Error("tensor view: " + std::to_string(strides.size()) + " strides given for rank " +
                std::to_string(shape.size()));
  }
  checked_numel(shape, "tensor view");
  for (std::size_t i = 0; i < shape.size(); ++i) {
    shape_[i] = shape[i];
    strides_[i] = strides[i];
  }
}

std::int64_t TensorView::numel() const noexcept {
  std::int64_t n = 1;
  // Any zero dimension first: the other dimensions of an empty tensor may multiply past 2^63.
  for (int i = 0; i < rank_; ++i) {
    if (shape_[std::size_t(i)] == 0) return 0;
  }
  for (int i = 0; i < rank_; ++i) n *= shape_[std::size_t(i)];
  return n;
}

bool TensorView::is_contiguous() const noexcept {
  if (numel() == 0) return true;
  std::int64_t expected = 1;
  for (int i = rank_ - 1; i >= 0; --i) {
    const auto d = std::size_t(i);
    if (shape_[d] == 1) continue;
    if (strides_[d] != expected) return false;
    expected *= shape_[d];
  }
  return true;
}

const void* TensorView::element_ptr(std::span<const std::int64_t> index) const {
  if (static_cast<int>(index.size()) != rank_) {
    throw Error("tensor index has " + std::to_string(index.size()) + " entries for a tensor of " +
                describe());
  }
  std::int64_t offset = 0;
  for (int i = 0; i < rank_; ++i) {
    const auto d = std::size_t(i);
    if (index[d] < 0 || index[d] >= shape_[d]) {
      throw Error("tensor index " + std::to_string(index[d]) + " is out of range for dimension " +
                  std::to_string(i) + " of " + describe());
    }
    offset += index[d] * strides_[d];
  }
  return data_ + offset * static_cast<std::int64_t>(element_size());
}

double TensorView::at(std::span<const std::int64_t> index) const {
  return load_as_double(element_ptr(index), dtype_, 0);
}

TensorView TensorView::transposed(int dim0, int dim1) const {
  check_dim(dim0, rank_, "transposed");
  check_dim(dim1, rank_, "transposed");
  TensorView v = *this;
  std::swap(v.shape_[std::size_t(dim0)], v.shape_[std::size_t(dim1)]);
  std::swap(v.strides_[std::size_t(dim0)], v.strides_[std::size_t(dim1)]);
  return v;
}

TensorView TensorView::sliced(int dim, std::int64_t start, std::int64_t stop, std::int64_t step) const {
  check_dim(dim, rank_, "sliced");
  const auto d = std::size_t(dim);
  if (step <= 0) throw Error("sliced: step must be positive, got " + std::to_string(step));
  if (start < 0 || stop < start || stop > shape_[d]) {
    throw Error("sliced: range [" + std::to_string(start) + ", " + std::to_string(stop) +
                ") is not within dimension " + std::to_string(dim) + " of " + describe());
  }
  TensorView v = *this;
  v.data_ = data_ + start * strides_[d] * static_cast<std::int64_t>(element_size());
  v.shape_[d] = (stop - start + step - 1) / step;
  v.strides_[d] = strides_[d] * step;
  return v;
}

TensorView TensorView::flipped(int dim) const {
  check_dim(dim, rank_, "flipped");
  const auto d = std::size_t(dim);
  TensorView v = *this;
  if (shape_[d] > 0) {
    v.data_ = data_ + (shape_[d] - 1) * strides_[d] * static_cast<std::int64_t>(element_size());
  }
  v.strides_[d] = -strides_[d];
  return v;
}

TensorView TensorView::broadcast(int dim, std::int64_t size) const {
  check_dim(dim, rank_, "broadcast");
  const auto d = std::size_t(dim);
  if (shape_[d] != 1 || size < 0) {
    throw Error("broadcast: dimension " + std::to_string(dim) + " of " + describe() +
                " must have size 1 to broadcast to " + std::to_string(size));
  }
  TensorView v = *this;
  v.shape_[d] = size;
  v.strides_[d] = 0;
  return v;
}

std::string TensorView::describe() const {
  std::string s(dtype_name(dtype_));
  auto list = [](std::span<const std::int64_t> values) {
    std::string out = "[";
    for (std::size_t i = 0; i < values.size(); ++i) {
      if (i) out += ", ";
      out += std::to_string(values[i]);
    }
    return out + "]";
  };
  s += list(shape());
  if (!is_contiguous()) s += " strides " + list(strides());
  return s;
}

TensorView distinct_elements(const TensorView& view, std::int64_t& repeats) {
  repeats = 1;
  if (view.numel() == 0) return view;
  std::array<std::int64_t, kMaxRank> shape{};
  for (int d = 0; d < view.rank(); ++d) {
    shape[std::size_t(d)] = view.shape(d);
    if (view.stride(d) == 0 && view.shape(d) > 1) {
      repeats *= view.shape(d);  // cannot overflow: the product of all sizes is checked
      shape[std::size_t(d)] = 1;
    }
  }
  if (repeats == 1) return view;
  return TensorView(view.data(), view.dtype(), std::span(shape.data(), std::size_t(view.rank())),
                    view.strides());
}

}  // namespace tfdebug
