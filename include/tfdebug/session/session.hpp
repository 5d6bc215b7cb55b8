// Session: the hub of a debugged run. Producers (the LibTorch adapter, the Probe API) hand it
// observations; it computes each tensor's statistics with the core stats kernel, runs the
// monitors and rules of docs/rules.md, deduplicates findings, raises the tier after a rule
// trips, keeps a flight recorder, and fans findings out to sinks. The rules are plug-ins
// (rule.hpp, rule_registry.hpp): the built-in ones and any the program registers or adds.
//
//   tfdebug::RunConfig config;
//   config.run_dir = "runs/exp1";                   // report.json (+ flight_recorder.json)
//   tfdebug::Session session(config);
//   session.add_sink(std::make_shared<tfdebug::ConsoleSink>());  // tfdebug/session/console_sink.hpp
//   ... producers call begin_step / observe / end_step ...
//   tfdebug::RunSummary summary = session.finish();  // writes the report, tells the sinks
//   for (const tfdebug::Finding& f : summary.findings) ...
//
// observe() is thread-safe and never throws: a failure inside it is recorded (hook_errors in the
// summary) and the run goes on. Memory is bounded by the RunConfig's capacities.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "tfdebug/session/finding.hpp"
#include "tfdebug/session/flight_recorder.hpp"
#include "tfdebug/session/observation.hpp"
#include "tfdebug/session/rule.hpp"
#include "tfdebug/session/rules.hpp"  // generated: every built-in rule's settings
#include "tfdebug/session/run_config.hpp"
#include "tfdebug/session/sink.hpp"

namespace tfdebug {

class Session : public ObservationSink {
 public:
  // Throws tfdebug::Error for an invalid configuration (RunConfig::validate).
  explicit Session(RunConfig config = {});
  ~Session() override;  // finish()es a run that was not finished, swallowing errors
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  void add_sink(std::shared_ptr<Sink> sink);
  // Runs `rule` too, after the registered rules (RuleRegistry) the configuration enabled. Rules
  // are added before the first begin_step; later, tfdebug::Error.
  void add_rule(std::unique_ptr<Rule> rule);

  void begin_step(std::int64_t step) override;
  void restart_step(std::int64_t step) override;
  Verdict observe(const Observation& observation) override;
  // The pause of the sinks whose pause_at asked for it at this thread's last observation.
  void pause(const PausePoint& point) override;
  void end_step(std::int64_t step, std::optional<double> loss) override;
  // The tier producers read at each begin_step: the run's tier (RunConfig::tier, or set_tier),
  // raised to diagnose for RunConfig::diagnose_steps steps after a new warning or error.
  Tier tier() const noexcept override;
  // Sets the run's tier from the next begin_step on (thread-safe). Tier::diagnose observes every
  // op from then on; Tier::watch goes back to the default, escalation included.
  void set_tier(Tier tier) noexcept;
  // Observes steps [first, first + count) in Tier::diagnose whatever the run's tier (as an
  // escalation does; a later escalation can extend it).
  void diagnose_steps(std::int64_t first, std::int64_t count) noexcept;
  bool should_stop() const noexcept override;

  // Ends the run: writes any pending flight-recorder dump, hands the summary to every sink
  // (report.json when run_dir is set) and returns it. Later calls return the same summary
  // without writing again. Throws tfdebug::Error when a file cannot be written.
  RunSummary finish();

  std::vector<Finding> findings() const;  // deduplicated, in order of first appearance
  std::vector<RecordedStep> flight_recorder() const;
  const RunConfig& config() const noexcept;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace tfdebug
