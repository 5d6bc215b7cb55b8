// tfdebug dap: a Debug Adapter Protocol server (tfdebug::ide::DapServer) around a training run of
// the demo model, for VS Code and other DAP clients: on standard input and output (what an editor
// spawns), or on a loopback TCP port (docs/debugger.md). The launch request's arguments choose the
// run: {"fault": "log", "steps": 200, "seed": 1, "tier": "diagnose"}.
#include <cstdio>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "commands.hpp"
#include "demo_model.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/ide/dap.hpp"
#include "tfdebug/session/session.hpp"
#include "tfdebug/torch/attach.hpp"

namespace tfdebug::cli {
namespace {

struct DapCliOptions {
  int port = -1;  // -1: standard input and output
};

int run_dap(const DapCliOptions& options) {
  // On stdio, standard output is the protocol's: nothing else may write there.
  std::unique_ptr<ide::DapServer> server =
      options.port >= 0 ? ide::DapServer::listen(options.port) : std::make_unique<ide::DapServer>(0, 1);
  RunConfig run;
  run.tier = Tier::diagnose;
  Session session(run);
  session.add_sink(server->debugger());
  session.add_sink(server->findings_sink());
  if (!server->wait_for_start()) return 0;  // the client left before configurationDone
  const nlohmann::json args = nlohmann::json::parse(server->launch_arguments(), nullptr, false);
  demo::DemoConfig config;
  config.steps = args.value("steps", std::int64_t{200});
  config.seed = args.value("seed", std::uint64_t{1});
  const std::string fault_name = args.value("fault", std::string("none"));
  const auto fault = demo::parse_fault(fault_name);
  const std::string tier = args.value("tier", std::string("diagnose"));
  int exit_code = 0;
  if (!fault || config.steps < 1 || (tier != "watch" && tier != "diagnose")) {
    std::fprintf(stderr,
                 "tfdebug dap: launch: expected fault one of %s, steps >= 1, tier watch or diagnose\n",
                 std::string(demo::kFaultNames).c_str());
    exit_code = 2;
  } else {
    config.fault = *fault;
    session.set_tier(tier == "watch" ? Tier::watch : Tier::diagnose);
    demo::DemoTrainer trainer(config);
    auto debug = tfdebug::torch::attach(session, trainer.model());
    for (std::int64_t step = 0; step < config.steps && !server->debugger()->aborted(); ++step) {
      (void)debug.step(step, [&] { return trainer.train_step(); });
    }
  }
  session.finish();
  server->finish(exit_code);
  return exit_code;
}

}  // namespace

void register_dap(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<DapCliOptions>();
  auto* cmd =
      app.add_subcommand("dap",
                         "Debug Adapter Protocol server (VS Code) around a run of the demo: breakpoints on "
                         "modules, ops, NaN and findings; stack, tensors, evaluate (docs/debugger.md)");
  cmd->add_option("--port", options->port,
                  "Listen on 127.0.0.1:PORT for one client instead of speaking on standard input and output "
                  "(0: a free port, printed on stderr)")
      ->check(CLI::Range(0, 65535));
  cmd->footer("The launch request's arguments: fault, steps, seed, tier (as tfdebug demo's options).");
  cmd->callback([options, &exit_code] { exit_code = run_dap(*options); });
}

}  // namespace tfdebug::cli
