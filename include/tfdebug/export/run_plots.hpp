// Pictures of a debugged run (`tfdebug report RUN_DIR --plots DIR`), from its metrics.jsonl:
//
//   tfdebug::RunPlots plots = tfdebug::write_run_plots("runs/exp1", "runs/exp1/plots");
//
// - loss.png: the loss per step (log axis when it spans more than two decades); a step whose
//   loss was NaN or infinite is a gap with a vermillion mark.
// - grad_norm.png, update_ratio.png: heatmaps of each module's gradient norm and update/weight
//   ratio (rows) over the steps (columns), colour by log10: vanishing layers are dark rows,
//   an explosion a bright column, NaN grey.
// - grad_norm_top.png: the gradient norm of the kMaxLines modules with the largest, over steps.
// - gradient_flow.png: per module, the median and the largest gradient norm over the run
//   (horizontal bars, log axis): the gradient-flow plot people write by hand.
// - activations.png: each module's largest |output| over the steps; dead_units.png the
//   fraction of dead units, when the run measured it.
// Runs longer than kMaxColumns steps are drawn in kMaxColumns columns, each the largest value
// of its steps (a spike is never averaged away); the answer says so.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace tfdebug {

inline constexpr std::size_t kMaxColumns = 1000;
inline constexpr std::size_t kMaxLines = 8;

struct RunPlotOptions {
  std::string format = "png";  // png, svg or pdf
};

struct RunPlots {
  std::vector<std::filesystem::path> files;
  std::int64_t steps = 0;
  std::size_t modules = 0;
  std::size_t steps_per_column = 1;  // > 1 when the run had more than kMaxColumns steps
};

// tfdebug::Error naming the file for a run directory without metrics.jsonl, a malformed one, an
// unknown format, or a picture that cannot be written.
RunPlots write_run_plots(const std::filesystem::path& run_dir, const std::filesystem::path& dir,
                         const RunPlotOptions& options = {});

}  // namespace tfdebug
