// Note [One pass]: a 2 GiB checkpoint read from the page cache costs about as much as copying
// it once, so inspect may not read it twice. Each piece of a tensor (whole rows, ~4 M values)
// is read in blocks of ~64 K values (256 KiB of f32, inside L2): the stats kernel reads the
// block from memory, then the row scan (abs-max per row, zero rows and columns) and, for the
// rare block with a NaN, the search for the first one read it again from cache. Pieces of all
// tensors go to threads in file order, so large and small tensors alike keep every core busy.
//
// Note [Sampled sparkline]: the 12-bin sparkline needs the tensor's range first. Rather than a
// second pass, it counts a sample copied during the pass (SamplePlan): every value of tensors up
// to 65,536 values, otherwise 16 evenly spaced runs of 4,096 consecutive values. It is a
// picture, not a statistic; the statistics are over every value.
//
// Note [Released pages]: after each piece its file pages are handed back (ModelFile::drop_pages:
// MADV_DONTNEED on the read-only mapping; the page cache keeps them), so resident memory stays a
// few pieces however large the checkpoint. Nothing may touch a piece's bytes afterwards: with
// the kernel's large page-cache folios one touch maps megabytes back in.
#include "tensor_scan.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "tfdebug/core/dtype.hpp"
#include "tfdebug/core/tensor.hpp"

namespace tfdebug::inspect::detail {
namespace {

constexpr std::int64_t kBlockValues = 1 << 16;
constexpr std::int64_t kPieceValues = 1 << 22;
constexpr std::int64_t kSampleRun = 4096;
constexpr std::int64_t kSampleRuns = 16;

bool is_matrix(const io::NamedTensor& t) {
  if (t.shape().size() != 2 || t.numel() == 0) return false;
  return t.quantized || is_floating(t.view.dtype());
}

// Rows as inspect splits them: the leading dimension for views; rows of the last (blocked)
// dimension for quantised tensors.
std::int64_t row_count(const io::NamedTensor& t) {
  if (t.quantized) return t.numel() == 0 ? 0 : t.numel() / t.quantized->shape.back();
  return t.shape().empty() ? 1 : t.shape()[0];
}

std::int64_t row_length(const io::NamedTensor& t) {
  const std::int64_t rows = row_count(t);
  return rows > 0 ? t.numel() / rows : 0;
}

struct Piece {
  std::size_t tensor;
  std::int64_t row_begin, row_end;
};

struct PieceResult {
  std::optional<StatsAccumulator> stats;
  std::int64_t first_nonfinite = -1;
  std::vector<std::uint8_t> column_nonzero;
};

// The first non-finite value of `block` in logical order, or -1.
std::int64_t first_nonfinite_in(const TensorView& block) {
  std::vector<std::int64_t> index(static_cast<std::size_t>(block.rank()), 0);
  const std::int64_t n = block.numel();
  for (std::int64_t position = 0; position < n; ++position) {
    if (!std::isfinite(block.at(index))) return position;
    for (int d = block.rank() - 1; d >= 0; --d) {
      if (++index[static_cast<std::size_t>(d)] < block.shape(d)) break;
      index[static_cast<std::size_t>(d)] = 0;
    }
  }
  return -1;
}

// Matrix rows [first_row, first_row + block rows): their abs-max (into row_abs_max, which
// points at the first of them), zero rows (appended to `dead`) and non-zero columns. Each
// piece owns its rows, so threads never write the same element.
void scan_rows(const TensorView& block, std::int64_t first_row, double* row_abs_max,
               std::vector<std::int64_t>& dead, std::vector<std::uint8_t>& column_nonzero,
               std::vector<std::uint8_t>& row_zero) {
  row_zero.resize(static_cast<std::size_t>(block.shape(0)));
  row_summaries(block, row_abs_max, row_zero.data(), column_nonzero.data());
  for (std::size_t r = 0; r < row_zero.size(); ++r) {
    if (row_zero[r]) dead.push_back(first_row + static_cast<std::int64_t>(r));
  }
}

// Note [Sampled sparkline]: which values the sparkline counts. Runs of consecutive values in
// logical order, copied while the pass reads them (the file pages are released after each
// piece, and with large page-cache folios touching them again maps megabytes back in).
struct SamplePlan {
  std::int64_t run = 0;             // values per run
  std::vector<std::int64_t> start;  // first value of each run
  DType dtype = DType::f32;         // of the copied values (f32 for decoded blocks)
  std::vector<std::byte> values;    // runs back to back
};

SamplePlan plan_sample(const io::NamedTensor& t) {
  SamplePlan plan;
  const std::int64_t n = t.numel();
  if (n == 0 || (!t.quantized && !t.view.is_contiguous())) return plan;  // strided: histogram of all
  plan.dtype = t.quantized ? DType::f32 : t.view.dtype();
  if (n <= kSampleRuns * kSampleRun) {
    plan.run = n;
    plan.start = {0};
  } else {
    plan.run = kSampleRun;
    for (std::int64_t i = 0; i < kSampleRuns; ++i)
      plan.start.push_back(i * (n - kSampleRun) / (kSampleRuns - 1));
  }
  plan.values.resize(static_cast<std::size_t>(plan.run) * plan.start.size() * dtype_size(plan.dtype));
  return plan;
}

// Copies the sampled values among the block's [first, first + count) (contiguous at `data`).
void copy_sample(SamplePlan& plan, const std::byte* data, std::int64_t first, std::int64_t count) {
  const auto elem = static_cast<std::int64_t>(dtype_size(plan.dtype));
  for (std::size_t j = 0; j < plan.start.size(); ++j) {
    const std::int64_t lo = std::max(plan.start[j], first);
    const std::int64_t hi = std::min(plan.start[j] + plan.run, first + count);
    if (lo >= hi) continue;
    std::memcpy(plan.values.data() + (static_cast<std::int64_t>(j) * plan.run + lo - plan.start[j]) * elem,
                data + (lo - first) * elem, static_cast<std::size_t>((hi - lo) * elem));
  }
}

void sample_histogram(const io::NamedTensor& t, const SamplePlan& plan, TensorScan& out) {
  const Stats& s = out.stats;
  if (s.finite() == 0) return;
  if (plan.start.empty()) {
    out.histogram = histogram_fixed(t.view, kSparkBins, s.min, s.max);
    return;
  }
  const std::int64_t total = plan.run * static_cast<std::int64_t>(plan.start.size());
  out.histogram =
      histogram_fixed(TensorView(plan.values.data(), plan.dtype, {total}), kSparkBins, s.min, s.max);
}

class Scanner {
 public:
  Scanner(std::span<const io::NamedTensor* const> tensors, const StatsOptions& options,
          std::function<void(const void*, std::size_t)> release)
      : originals_(tensors),
        tensors_(tensors.begin(), tensors.end()),
        options_(options),
        release_(std::move(release)),
        scans_(tensors.size()),
        repeats_(tensors.size(), 1),
        pieces_left_(tensors.size()) {
    options_.threads = 1;  // parallel over pieces instead
    // Note [Broadcast views]: a view that repeats its elements is scanned over the stored ones.
    for (std::size_t i = 0; i < tensors.size(); ++i) {
      if (tensors[i]->quantized) continue;
      const TensorView distinct = distinct_elements(tensors[i]->view, repeats_[i]);
      if (repeats_[i] == 1) continue;
      distinct_.push_back(std::make_unique<io::NamedTensor>(*tensors[i]));
      distinct_.back()->view = distinct;
      tensors_[i] = distinct_.back().get();
    }
    for (std::size_t i = 0; i < tensors.size(); ++i) {
      const io::NamedTensor& t = *tensors_[i];
      const std::int64_t rows = t.numel() == 0 ? 0 : row_count(t);  // [2^62, 0]: no rows to visit
      const std::int64_t per_piece =
          std::max<std::int64_t>(1, kPieceValues / std::max<std::int64_t>(1, row_length(t)));
      first_piece_.push_back(pieces_.size());
      if (rows == 0) pieces_.push_back({i, 0, 0});
      for (std::int64_t r = 0; r < rows; r += per_piece)
        pieces_.push_back({i, r, std::min(rows, r + per_piece)});
      pieces_left_[i] = static_cast<int>(pieces_.size() - first_piece_.back());
      samples_.push_back(plan_sample(t));
      if (is_matrix(t) && repeats_[i] == 1) {  // a repeated matrix has one distinct row or column
        scans_[i].matrix = true;
        scans_[i].row_abs_max.assign(static_cast<std::size_t>(rows), 0.0);
      }
      total_bytes_ += static_cast<std::int64_t>(
          t.quantized ? t.quantized->bytes() : static_cast<std::size_t>(t.numel()) * t.view.element_size());
    }
    first_piece_.push_back(pieces_.size());
    results_.resize(pieces_.size());
    dead_rows_.resize(pieces_.size());
  }

  std::vector<TensorScan> run(int threads, const std::function<void(std::int64_t, std::int64_t)>& progress) {
    if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    threads = static_cast<int>(
        std::min<std::size_t>(static_cast<std::size_t>(threads), std::max<std::size_t>(1, pieces_.size())));
    std::vector<std::thread> pool;
    pool.reserve(static_cast<std::size_t>(threads));
    for (int i = 0; i < threads; ++i) pool.emplace_back([this] { work(); });
    if (progress) {
      while (finished_.load() < pieces_.size()) {
        progress(bytes_done_.load(), total_bytes_);
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
    }
    for (auto& t : pool) t.join();
    if (error_) std::rethrow_exception(error_);
    return std::move(scans_);
  }

 private:
  void work() {
    try {
      for (std::size_t p = next_.fetch_add(1); p < pieces_.size(); p = next_.fetch_add(1)) {
        scan_piece(p);
        const std::size_t t = pieces_[p].tensor;
        if (pieces_left_[t].fetch_sub(1, std::memory_order_acq_rel) == 1) finish_tensor(t);
        finished_.fetch_add(1);
      }
    } catch (...) {
      std::lock_guard lock(error_mutex_);
      if (!error_) error_ = std::current_exception();
      finished_.store(pieces_.size());
      next_.store(pieces_.size());
    }
  }

  void scan_piece(std::size_t p) {
    const Piece& piece = pieces_[p];
    const io::NamedTensor& t = *tensors_[piece.tensor];
    TensorScan& scan = scans_[piece.tensor];
    PieceResult& result = results_[p];
    const DType dtype = t.quantized ? DType::f32 : t.view.dtype();
    result.stats.emplace(dtype, options_);
    const std::int64_t row_len = row_length(t);
    const std::int64_t row_bytes = t.quantized
                                       ? row_len / block_format_info(t.quantized->format).block_elements *
                                             block_format_info(t.quantized->format).block_bytes
                                       : row_len * static_cast<std::int64_t>(t.view.element_size());
    if (scan.matrix) result.column_nonzero.assign(static_cast<std::size_t>(t.shape()[1]), 0);
    const std::int64_t block_rows =
        std::max<std::int64_t>(1, kBlockValues / std::max<std::int64_t>(1, row_len));
    std::vector<float> decoded;
    std::vector<std::uint8_t> row_zero;
    for (std::int64_t r = piece.row_begin; r < piece.row_end; r += block_rows) {
      const std::int64_t r_end = std::min(piece.row_end, r + block_rows);
      TensorView block;
      if (t.quantized) {
        const BlockFormatInfo& info = block_format_info(t.quantized->format);
        decoded.resize(static_cast<std::size_t>((r_end - r) * row_len));
        dequantize(t.quantized->format,
                   t.quantized->data + r * row_len / info.block_elements * info.block_bytes,
                   (r_end - r) * row_len / info.block_elements, decoded.data());
        block = TensorView(decoded.data(), DType::f32, {r_end - r, row_len});
      } else {
        block = t.view.rank() == 0 ? t.view : t.view.sliced(0, r, r_end);
      }
      StatsAccumulator block_stats(dtype, options_);
      block_stats.add(block);
      if (result.first_nonfinite < 0 && block_stats.result().nonfinite() > 0) {
        result.first_nonfinite = r * row_len + first_nonfinite_in(block);
      }
      result.stats->merge_from(block_stats);
      if (!samples_[piece.tensor].start.empty()) {
        copy_sample(samples_[piece.tensor], static_cast<const std::byte*>(block.data()), r * row_len,
                    (r_end - r) * row_len);
      }
      if (scan.matrix)
        scan_rows(block, r, scan.row_abs_max.data() + r, dead_rows_[p], result.column_nonzero, row_zero);
      bytes_done_.fetch_add((r_end - r) * row_bytes, std::memory_order_relaxed);
    }
    // Note [One pass]: the piece's file pages are not needed again (the sparkline sample and a
    // NaN search re-read a few), so resident memory stays a few pieces per thread.
    if (release_ && (t.quantized || t.view.is_contiguous()) && piece.row_end > piece.row_begin) {
      const auto* base = t.quantized ? t.quantized->data : static_cast<const std::byte*>(t.view.data());
      release_(base + piece.row_begin * row_bytes,
               static_cast<std::size_t>((piece.row_end - piece.row_begin) * row_bytes));
    }
  }

  void finish_tensor(std::size_t i) {
    const io::NamedTensor& t = *tensors_[i];
    TensorScan& scan = scans_[i];
    const std::size_t begin = first_piece_[i];
    const std::size_t end = first_piece_[i + 1];
    StatsAccumulator& all = *results_[begin].stats;
    for (std::size_t p = begin + 1; p < end; ++p) all.merge_from(*results_[p].stats);
    scan.stats = repeated(all.result(), repeats_[i]);
    for (std::size_t p = begin; p < end; ++p) {
      if (results_[p].first_nonfinite >= 0) {
        scan.first_nonfinite = full_index(i, results_[p].first_nonfinite);
        break;
      }
    }
    if (scan.matrix) {
      std::vector<std::uint8_t>& nonzero = results_[begin].column_nonzero;  // OR the others into it
      for (std::size_t p = begin; p < end; ++p) {
        if (p > begin) {
          for (std::size_t c = 0; c < nonzero.size(); ++c) nonzero[c] |= results_[p].column_nonzero[c];
        }
        scan.dead_rows.insert(scan.dead_rows.end(), dead_rows_[p].begin(), dead_rows_[p].end());
      }
      for (std::size_t c = 0; c < nonzero.size(); ++c) {
        if (!nonzero[c]) scan.dead_columns.push_back(static_cast<std::int64_t>(c));
      }
    }
    for (std::size_t p = begin; p < end; ++p) {  // piece results are no longer needed
      results_[p].stats.reset();
      results_[p].column_nonzero.clear();
      results_[p].column_nonzero.shrink_to_fit();
      dead_rows_[p].clear();
      dead_rows_[p].shrink_to_fit();
    }
    sample_histogram(t, samples_[i], scan);
    samples_[i] = SamplePlan{};
  }

  // The flat index in the whole tensor of the distinct element at flat index `k` (Note
  // [Broadcast views]): its first occurrence, where the repeated dimensions are 0.
  std::int64_t full_index(std::size_t i, std::int64_t k) const {
    if (repeats_[i] == 1) return k;
    const TensorView& distinct = tensors_[i]->view;
    const std::span<const std::int64_t> full = originals_[i]->shape();
    std::int64_t index = 0;
    std::int64_t scale = 1;
    for (int d = distinct.rank() - 1; d >= 0; --d) {
      index += k % distinct.shape(d) * scale;
      k /= distinct.shape(d);
      scale *= full[static_cast<std::size_t>(d)];
    }
    return index;
  }

  std::span<const io::NamedTensor* const> originals_;
  std::vector<const io::NamedTensor*> tensors_;             // originals_, or their distinct elements
  std::vector<std::unique_ptr<io::NamedTensor>> distinct_;  // Note [Broadcast views]
  StatsOptions options_;
  std::function<void(const void*, std::size_t)> release_;
  std::vector<TensorScan> scans_;
  std::vector<std::int64_t> repeats_;  // how often each element of tensors_[i] occurs in originals_[i]
  std::vector<std::atomic<int>> pieces_left_;
  std::vector<Piece> pieces_;
  std::vector<std::size_t> first_piece_;
  std::vector<PieceResult> results_;
  std::vector<SamplePlan> samples_;  // per tensor; pieces write disjoint runs
  std::vector<std::vector<std::int64_t>> dead_rows_;
  std::int64_t total_bytes_ = 0;
  std::atomic<std::size_t> next_{0};
  std::atomic<std::size_t> finished_{0};
  std::atomic<std::int64_t> bytes_done_{0};
  std::mutex error_mutex_;
  std::exception_ptr error_;
};

}  // namespace

std::vector<TensorScan> scan_tensors(std::span<const io::NamedTensor* const> tensors,
                                     const StatsOptions& options, int threads,
                                     const std::function<void(std::int64_t, std::int64_t)>& progress,
                                     const std::function<void(const void*, std::size_t)>& release) {
  Scanner scanner(tensors, options, release);
  return scanner.run(threads, progress);
}

bool same_values(const io::NamedTensor& a, const io::NamedTensor& b) {
  if (a.dtype_name() != b.dtype_name()) return false;
  if (!std::equal(a.shape().begin(), a.shape().end(), b.shape().begin(), b.shape().end())) return false;
  if (a.quantized) return std::memcmp(a.quantized->data, b.quantized->data, a.quantized->bytes()) == 0;
  // Note [Broadcast views]: repeated views compare by their stored elements; two tensors that
  // repeat along different dimensions are not reported as copies of each other.
  std::int64_t repeats_a = 1;
  std::int64_t repeats_b = 1;
  const TensorView va = distinct_elements(a.view, repeats_a);
  const TensorView vb = distinct_elements(b.view, repeats_b);
  if (!std::equal(va.shape().begin(), va.shape().end(), vb.shape().begin(), vb.shape().end())) return false;
  const Tensor ca = va.is_contiguous() ? Tensor() : Tensor::copy_of(va);
  const Tensor cb = vb.is_contiguous() ? Tensor() : Tensor::copy_of(vb);
  const void* pa = va.is_contiguous() ? va.data() : ca.data();
  const void* pb = vb.is_contiguous() ? vb.data() : cb.data();
  return std::memcmp(pa, pb, static_cast<std::size_t>(va.numel()) * va.element_size()) == 0;
}

}  // namespace tfdebug::inspect::detail
