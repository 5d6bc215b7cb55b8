// RunConfig: how a Session watches a run: where it writes, which rules run with which
// thresholds, how long histories are. Every field has a documented default (docs/rules.md,
// docs/live-debugging.md: "Run configuration"), so a default-constructed RunConfig is a
// complete configuration.
//
//   tfdebug::RunConfig config;                          // in code ...
//   config.run_dir = "runs/exp1";
//   config.target_dtype = tfdebug::DType::f16;
//   config.rules.dead_units.window = 50;
//   auto from_disk = tfdebug::RunConfig::from_file("tfdebug.toml");  // ... or from a file
//
// from_file reads JSON (.json) or TOML (.toml) with the same keys; unknown keys and values of
// the wrong type or range are errors (tfdebug::Error naming the file and the key).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tfdebug/core/dtype.hpp"
#include "tfdebug/session/observation.hpp"

namespace tfdebug {

struct NonfiniteRule {
  bool enabled = true;
};

struct HeadroomRule {
  bool enabled = true;  // runs only when RunConfig::target_dtype is set
  // abs_max / the target's largest finite value at or above this: overflow risk. 0.763 is
  // ONNX Runtime's HALF_OVERFLOW_THRESHOLD (50000 of f16's 65504).
  double overflow_headroom = 0.763;
  // Fraction of the elements that would flush to zero in the target at or above this.
  double underflow_fraction = 0.01;
};

struct GradientRule {
  bool enabled = true;
  int min_history = 5;               // steps of a layer's history before comparing to it
  double explode_ratio = 10.0;       // norm / median of the layer's history above this
  double vanish_ratio = 1e-2;        // ... below this
  int min_layers = 3;                // layers in a step before comparing layers
  double explode_vs_layers = 100.0;  // norm / median of the step's layer norms above this
  double vanish_vs_layers = 1e-3;    // ... below this
};

struct DeadUnitsRule {
  bool enabled = true;
  int window = 100;                  // a unit is dead when it was exactly 0 for this many steps
  double min_fraction = 0.1;         // report a module when at least this fraction of units is dead
  std::int64_t max_units = 1 << 20;  // outputs with more units (last dimension) are skipped
};

struct SaturationRule {
  bool enabled = true;
  double margin = 0.01;       // tanh: |y| >= 1 - margin; sigmoid: y <= margin or y >= 1 - margin
  double gelu_cutoff = 3.0;   // GELU: input x < -gelu_cutoff, where |GELU'(x)| < 0.012
  double max_fraction = 0.5;  // report when at least this fraction of values is saturated
};

struct LossRule {
  bool enabled = true;
  double spike_factor = 10.0;      // loss > factor x the largest loss seen (Megatron-LM)
  int window = 50;                 // losses kept for the robust z-score
  int min_window = 10;             // losses needed before the z-score is used
  double max_z = 6.0;              // (loss - median) / (1.4826 MAD) above this is a spike
  int divergence_window = 10;      // median of this many recent losses ...
  double divergence_factor = 3.0;  // ... above factor x the best such median: divergence
};

struct UpdateRatioRule {
  bool enabled = true;
  double min_ratio = 1e-5;  // ||update|| / ||parameter|| below this: not learning
  double max_ratio = 1e-1;  // above this: learning rate too high (CS231n: ~1e-3 is healthy)
};

struct WeightScaleRule {
  bool enabled = true;
  // std * sqrt(fan_in) of a weight matrix when first seen outside [min_init, max_init];
  // embedding tables (names with embed, wte, wpe, tok, pos) are not judged by fan-in
  double min_init = 0.05;
  double max_init = 8.0;
  double max_drift = 10.0;  // scale / first scale above this or below 1 / max_drift
};

struct SpectralRule {
  bool enabled = true;
  int every = 50;                       // steps between measurements of each weight matrix
  int max_iterations = 100;             // power iteration steps (warm-started from the last vector)
  double tolerance = 1e-6;              // relative change of the estimate that stops iterating
  double min_stable_rank = 1.5;         // ||W||_F^2 / sigma_max^2 below this: rank collapse
  double max_growth = 10.0;             // sigma_max / the first measurement above this
  std::int64_t max_elements = 1 << 24;  // larger matrices are skipped
};

struct Rules {
  NonfiniteRule nonfinite;
  HeadroomRule headroom;
  GradientRule gradients;
  DeadUnitsRule dead_units;
  SaturationRule saturation;
  LossRule loss;
  UpdateRatioRule update_ratio;
  WeightScaleRule weight_scale;
  SpectralRule spectral;
};

// The per-step metrics handed to sinks (Sink::on_step, include/tfdebug/session/step_metrics.hpp).
struct MetricsConfig {
  // Histograms of every parameter and of every module's forward outputs on steps where
  // step % histogram_every == 0 (when a sink wants them); 0: never.
  int histogram_every = 10;
  // Histograms per histogram step (parameters first, then modules); the rest are counted.
  int max_histograms = 256;
};

struct RunConfig {
  // Where report.json and flight_recorder.json go; empty: nowhere. Created when needed.
  std::filesystem::path run_dir;
  Tier tier = Tier::watch;  // the tier when no rule has tripped recently
  // Producers throw tfdebug::Error at their next safe point after the first error finding.
  bool stop_on_error = false;
  bool console = false;     // add a ConsoleSink on stderr
  int diagnose_steps = 10;  // steps in Tier::diagnose after a new warning or error (docs/rules.md)
  int history_length = 50;  // per-layer gradient-norm history (ring)
  // The dtype the model is, or will be, run in; enables the headroom rule (f16, bf16, fp8).
  std::optional<DType> target_dtype;
  int flight_recorder_steps = 8;       // steps kept in the flight recorder (ring)
  int flight_recorder_after = 1;       // steps recorded after the first error before the dump
  int flight_recorder_max_ops = 4096;  // per-step summaries kept (the rest are counted)
  // Op outputs get the full statistics on steps where step % this == 0, and on every step after
  // the first error until the flight recorder is written; on other steps a one-pass summary
  // (compute_extremes: NaN/Inf, zeros, min, max, abs_max; several times faster), which every rule
  // works from. What it lacks is the flight recorder's mean and std (null in
  // flight_recorder.json). 1: full statistics for every output. Parameters, gradients and updates
  // always get the full statistics, and every output does while a sink wants per-step metrics or
  // target_dtype is set.
  int flight_recorder_moments_every = 10;
  int max_tracked = 10000;  // distinct (module, op) keys with rule state; the rest are counted
  int max_findings = 1000;  // distinct findings kept; the rest are counted
  Rules rules;
  MetricsConfig metrics;

  // Reads a .json or .toml file (by extension). A relative run_dir is relative to the file's
  // folder. Throws tfdebug::Error naming the file (and key) on any problem.
  static RunConfig from_file(const std::filesystem::path& path);
  // Checks ranges (positive windows, ordered thresholds); throws tfdebug::Error naming the key.
  void validate() const;
  // Every key of the configuration file with this configuration's value as text, in the file's
  // key names ("tier" = "watch", "rules.loss.window" = "50", "target_dtype" = "none"), sorted:
  // e.g. the params of an MLflow run.
  std::vector<std::pair<std::string, std::string>> entries() const;
};

}  // namespace tfdebug
