// What a debugger does with a tensor of a stopped run: slice it with numpy's index syntax, show
// its statistics (the stats kernel), its first values and a histogram, and save it as .npy.
//
//   TensorView row = tfdebug::ide::slice(weight, "[0, 2:5]");     // weight[0, 2:5]
//   std::puts(tfdebug::ide::stats_text(tfdebug::compute_stats(row)).c_str());
//   std::puts(tfdebug::ide::values_text(row).c_str());               // [0.12, -0.5, 0.33]
//   std::puts(tfdebug::ide::histogram_text(row, 10).c_str());
//   tfdebug::ide::save_npy(row, "row.npy");                          // numpy.load reads it
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "tfdebug/core/stats.hpp"
#include "tfdebug/core/tensor_view.hpp"

namespace tfdebug::ide {

// `index`: "[i, a:b, :, ::s, -1]" (numpy's basic indexing, positive steps, no ellipsis); an
// integer drops its dimension. The result views the same memory. Throws tfdebug::Error for an
// index out of range or text it cannot read.
TensorView slice(TensorView view, std::string_view index);

// A name with an optional index: "blocks.0.fc.weight[0, :4]" -> {"blocks.0.fc.weight", "[0, :4]"}.
struct IndexedName {
  std::string name;
  std::string index;  // "" when none
};
IndexedName split_index(std::string_view text);

// One line: "f32[4, 8]  min -1.5  max 2  mean 0.031  std 0.9  abs_max 2  negative 13  zero 0
// nan 0  inf 0".
std::string stats_text(const Stats& stats);
// "f32[2, 3] [[1, 2, 3], [4, 5, 6]]": rows of rank-1 and rank-2 views (at most `max_values` values
// in all, elided with "..."), the first values flattened for higher ranks.
std::string values_text(TensorView view, int max_values = 64);
// `bins` equal bins over [min, max] of the finite values as text bars, one line per bin, with
// the NaN and Inf counts after them.
std::string histogram_text(TensorView view, int bins = 10, int width = 40);
// Writes `view` as a .npy file (format 1.0, C order): f64, f32, f16, i8..i64, u8 and bool as they
// are; bf16 and fp8 widened to f32. Throws tfdebug::Error when the file cannot be written.
void save_npy(TensorView view, const std::filesystem::path& path);

}  // namespace tfdebug::ide
