// What `tfdebug console` and `tfdebug dap` run under the debugger, set up in one place: the
// demo's transformer LM (--demo, with its fault, seed and steps) or a TorchScript model with data
// (--model M.pt --input X.npy [--labels y.npy], script_trainer.hpp); the tier; and, with an
// output folder, the shapes export written when the run ends (OUT/shapes.json,
// tfdebug::ide::ShapeRecorder).
//
//   tfdebug::cli::DebugTarget target(options);          // throws tfdebug::Error: exit 2
//   tfdebug::Session session(target.run_config());
//   target.add_sinks(session);
//   target.run(session, [&] { return debugger->aborted(); }, on_step);
//   session.finish();
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "tfdebug/session/run_config.hpp"
#include "tfdebug/session/session.hpp"

namespace tfdebug::cli {

struct DebugTargetOptions {
  bool demo = false;
  std::string model, input, labels;  // a TorchScript model with data
  std::int64_t steps = -1;           // -1: the default (the demo: 200; a model: 1)
  std::uint64_t seed = 1;
  std::string fault = "none";
  std::string tier = "diagnose";
  std::string out;  // "": no shapes export
};

class DebugTarget {
 public:
  // Checks the options and loads the model and data; tfdebug::Error with one line otherwise.
  explicit DebugTarget(const DebugTargetOptions& options);
  ~DebugTarget();
  DebugTarget(const DebugTarget&) = delete;
  DebugTarget& operator=(const DebugTarget&) = delete;

  // "demo transformer LM, 18704 parameters; fault log; tier diagnose; 200 steps; seed 1".
  std::string description() const;
  std::int64_t steps() const noexcept { return steps_; }
  Tier tier() const noexcept { return tier_; }
  // The shapes export and whatever else the options ask for.
  void add_sinks(Session& session) const;
  // Attaches to the model and runs steps() steps (fewer when `stop` says so after a step),
  // calling `on_step(step, loss)` after each; returns the steps run.
  std::int64_t run(Session& session, const std::function<bool()>& stop,
                   const std::function<void(std::int64_t, std::optional<double>)>& on_step) const;

 private:
  struct Model;
  DebugTargetOptions options_;
  std::int64_t steps_ = 0;
  Tier tier_ = Tier::diagnose;
  std::unique_ptr<Model> model_;
};

}  // namespace tfdebug::cli
