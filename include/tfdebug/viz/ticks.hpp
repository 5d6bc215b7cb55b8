// Axis ticks a reader can use: 1, 2 or 5 times a power of ten on linear axes, powers of ten on
// log axes, and labels no longer than they need to be.
//
//   auto t = tfdebug::viz::linear_ticks(0.0, 0.93, 5);  // 0, 0.2, 0.4, 0.6, 0.8
//   auto l = tfdebug::viz::log_ticks(3e-4, 20.0);       // 1e-3, 1e-2, 1e-1, 1, 1e1
//   t.labels[1] == "0.2"
//
// linear_ticks picks the step among {1, 2, 2.5, 5} x 10^k that gives the count nearest `target`
// without going under half of it (Heckbert's "nice numbers"); every tick lies in [lo, hi].
// `padded_range` widens a data range to the ticks around it, so that lines do not touch the frame.
#pragma once

#include <string>
#include <vector>

namespace tfdebug::viz {

struct Ticks {
  std::vector<double> values;
  std::vector<std::string> labels;  // one per value
  double step = 0;                  // linear: the distance between ticks; log: decades per tick
};

// lo <= hi, both finite (else empty). lo == hi gives the single tick lo.
Ticks linear_ticks(double lo, double hi, int target = 5);
// 0 < lo <= hi, both finite (else empty). Decades; when the range spans many decades, every
// k-th decade so that about `target` remain. Within one decade: 1, 2, 5 times a power of ten.
Ticks log_ticks(double lo, double hi, int target = 6);

struct Range {
  double lo = 0, hi = 1;
};
// The data range [lo, hi] widened to the nice numbers around it (linear) or to whole decades
// (log). An empty or single-valued range becomes a small one around the value. Non-finite input
// gives [0, 1].
Range padded_range(double lo, double hi, bool log_scale = false, int target = 5);

// A number as a tick label at resolution `step`: 0.25, 1.5e-05, 2000, 1e+06 -> "1e6".
std::string format_tick(double value, double step);
// A value for a tooltip or legend: 4 significant digits, exponent notation outside [1e-3, 1e5).
std::string format_value(double value);

}  // namespace tfdebug::viz
