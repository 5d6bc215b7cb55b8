// RunConfig: how a Session watches a run: where it writes, which rules run with which
// thresholds, how long histories are. Every field has a documented default (docs/rules.md,
// docs/live-debugging.md: "Run configuration"), so a default-constructed RunConfig is a
// complete configuration.
//
//   tfdebug::RunConfig config;                          // in code ...
//   config.run_dir = "runs/exp1";
//   config.target_dtype = tfdebug::DType::f16;
//   config.rules.get<tfdebug::DeadUnitsRule>().window = 50;   // tfdebug/session/rules/dead_units.hpp
//   auto from_disk = tfdebug::RunConfig::from_file("tfdebug.toml");  // ... or from a file
//
// from_file reads JSON (.json) or TOML (.toml) with the same keys; unknown keys and values of
// the wrong type or range are errors (tfdebug::Error naming the file and the key). The keys of
// [rules.<section>] are those each registered rule declares (rule_registry.hpp).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tfdebug/core/dtype.hpp"
#include "tfdebug/session/observation.hpp"
#include "tfdebug/session/rule_settings.hpp"

namespace tfdebug {

// The per-step metrics handed to sinks (Sink::on_step, include/tfdebug/session/step_metrics.hpp).
struct MetricsConfig {
  // Histograms of every parameter and of every module's forward outputs (when a sink wants
  // them) in the first step of every histogram_every steps that observes them: steps 0, 10,
  // 20 ... when every step does, the first of watch's samples in each otherwise; 0: never.
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
  // Queued sinks (Sink::delivery, the default): events each sink's queue holds before new ones
  // are dropped (and counted), and how long finish() waits for a sink to deliver what it holds
  // and to return from on_run_end before it gives up on it. File keys: sinks.queue,
  // sinks.finish_timeout_s.
  int sink_queue = 4096;
  double sink_finish_timeout_s = 30.0;
  // Each rule's settings, by its settings type (include/tfdebug/session/rules/, or a plug-in's):
  // config.rules.get<DeadUnitsRule>().window = 50.
  RuleSettings rules;
  MetricsConfig metrics;

  // Reads a .json or .toml file (by extension). A relative run_dir is relative to the file's
  // folder. Throws tfdebug::Error naming the file (and key) on any problem.
  static RunConfig from_file(const std::filesystem::path& path);
  // The same for a configuration already in memory: `path` names it in errors, says its format by
  // its extension, and is what a relative run_dir is relative to (its folder).
  static RunConfig from_text(std::string_view text, const std::filesystem::path& path);
  // Checks ranges (positive windows, ordered thresholds); throws tfdebug::Error naming the key.
  void validate() const;
  // Every key of the configuration file with this configuration's value as text, in the file's
  // key names ("tier" = "watch", "rules.loss.window" = "50", "target_dtype" = "none"), sorted:
  // e.g. the params of an MLflow run.
  std::vector<std::pair<std::string, std::string>> entries() const;
};

}  // namespace tfdebug
