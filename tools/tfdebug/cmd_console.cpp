// tfdebug console: the debugger's REPL (tfdebug::ide::console) around a training run of the demo
// model: set breakpoints, run, stop at the op that made the first NaN, look at its inputs, step
// (docs/debugger.md).
#include <cstdio>
#include <limits>
#include <memory>
#include <string>

#include "commands.hpp"
#include "demo_model.hpp"
#include "demo_profile.hpp"
#include "terminal.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/ide/console.hpp"
#include "tfdebug/session/console_sink.hpp"
#include "tfdebug/session/session.hpp"
#include "tfdebug/torch/attach.hpp"

namespace tfdebug::cli {
namespace {

struct ConsoleCliOptions {
  bool demo = false;
  std::int64_t steps = 200;
  std::uint64_t seed = 1;
  std::string fault = "none";
  std::string tier = "diagnose";
  std::int64_t every = 20;
};

int run_console(const ConsoleCliOptions& options) {
  if (!options.demo) throw Error("console: expected --demo (the run to debug: the demo's transformer LM)");
  demo::DemoConfig config;
  config.steps = options.steps;
  config.seed = options.seed;
  const auto fault = demo::parse_fault(options.fault);
  if (!fault)
    throw Error("--fault: unknown fault '" + options.fault + "'; expected " + std::string(demo::kFaultNames));
  config.fault = *fault;
  if (options.tier != "watch" && options.tier != "diagnose")
    throw Error("--tier: expected watch or diagnose, got '" + options.tier + "'");
  if (config.steps < 1) throw Error("--steps: expected at least 1");
  demo::DemoTrainer trainer(config);
  std::printf(
      "tfdebug console: demo transformer LM, %lld parameters; fault %s; tier %s; %lld steps; seed %llu\n",
      static_cast<long long>(trainer.parameter_count()), options.fault.c_str(), options.tier.c_str(),
      static_cast<long long>(config.steps), static_cast<unsigned long long>(config.seed));
  RunConfig run;
  // Breakpoints on ops need every op observed: diagnose (the default here).
  run.tier = options.tier == "watch" ? Tier::watch : Tier::diagnose;
  Session session(run);
  session.add_sink(std::make_shared<ConsoleSink>(stdout, use_colour(stdout)));
  const auto console = ide::console(session);
  std::int64_t steps_run = 0;
  if (!console->aborted()) {
    auto debug = tfdebug::torch::attach(session, trainer.model());
    for (std::int64_t step = 0; step < config.steps && !console->aborted(); ++step) {
      const double loss = debug.step(step, [&] { return trainer.train_step(); })
                              .value_or(std::numeric_limits<double>::quiet_NaN());
      ++steps_run;
      if (options.every > 0 && (step % options.every == 0 || step + 1 == config.steps))
        std::printf("step %5lld  loss %s\n", static_cast<long long>(step), loss_text(loss).c_str());
    }
  }
  const RunSummary summary = session.finish();
  std::printf("%s after %lld of %lld steps; %zu findings; stopped %lld time(s)\n",
              console->aborted() ? "run stopped by quit" : "run finished", static_cast<long long>(steps_run),
              static_cast<long long>(config.steps), summary.findings.size(),
              static_cast<long long>(console->debugger()->stops()));
  std::fflush(stdout);
  return 0;
}

}  // namespace

void register_console(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<ConsoleCliOptions>();
  auto* cmd =
      app.add_subcommand("console",
                         "Debug a training run interactively: breakpoints on ops, modules, the first NaN, "
                         "statistics; step; inspect tensors (docs/debugger.md)");
  cmd->add_flag("--demo", options->demo, "Run the demo's transformer LM (tfdebug demo) under the console");
  cmd->add_option("--steps", options->steps, "Training steps")->capture_default_str();
  cmd->add_option("--seed", options->seed, "Random seed (weights and data)")->capture_default_str();
  cmd->add_option("--fault", options->fault, "Injected fault: " + std::string(demo::kFaultNames))
      ->capture_default_str();
  cmd->add_option("--tier", options->tier,
                  "What tfdebug observes: watch or diagnose (op breakpoints need diagnose)")
      ->capture_default_str();
  cmd->add_option("--every", options->every, "Print the loss every N steps (0: never)")
      ->capture_default_str();
  cmd->footer(
      "Commands come from the terminal (readline: history, TAB completion) or, when standard input is not a "
      "terminal, one per line from it. Exit 0 when the run finished or was quit, 2 for bad options.");
  cmd->callback([options, &exit_code] { exit_code = run_console(*options); });
}

}  // namespace tfdebug::cli
