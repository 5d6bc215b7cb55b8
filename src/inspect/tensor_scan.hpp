// One pass over a model's tensors for tfdebug::inspect (`tfdebug inspect`): the statistics (stats kernel),
// the per-row abs-max and all-zero rows and columns of matrices, the first non-finite element, and a
// sparkline histogram. Work is split into pieces of whole rows that threads take in turn; each piece is read
// in blocks small enough to stay in cache while every consumer reads them, so a tensor's memory is read once
// (Note [One pass] in tensor_scan.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "tfdebug/core/histogram.hpp"
#include "tfdebug/core/stats.hpp"
#include "tfdebug/inspect/inspection.hpp"
#include "tfdebug/io/model_file.hpp"

namespace tfdebug::inspect::detail {

struct TensorScan {
  Stats stats;
  bool matrix = false;                     // rank 2 and floating or block-quantised
  std::vector<double> row_abs_max;         // matrices: largest finite |x| per row (0 if none)
  std::vector<std::int64_t> dead_rows;     // matrices: rows whose values are all zero
  std::vector<std::int64_t> dead_columns;  // matrices: columns whose values are all zero
  std::int64_t first_nonfinite = -1;       // flat index (logical order) of the first NaN/Inf
  Histogram histogram;                     // kSparkBins bins over [min, max] (Note [Sampled sparkline])
};

using ::tfdebug::inspect::kSparkBins;

// Scans every tensor on `threads` threads (0: one per core). `progress(done, total)` is called
// from the calling thread a few times a second with bytes scanned so far, when given;
// `release(data, bytes)` after each piece with the bytes it read (e.g. ModelFile::drop_pages,
// so that resident memory stays a few pieces however large the files are).
std::vector<TensorScan> scan_tensors(std::span<const io::NamedTensor* const> tensors,
                                     const StatsOptions& options, int threads,
                                     const std::function<void(std::int64_t, std::int64_t)>& progress = {},
                                     const std::function<void(const void*, std::size_t)>& release = {});

// Whether two tensors hold the same dtype, shape and bytes.
bool same_values(const io::NamedTensor& a, const io::NamedTensor& b);

}  // namespace tfdebug::inspect::detail
