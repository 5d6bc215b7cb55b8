// tfdebug dap: a Debug Adapter Protocol server (tfdebug::ide::DapServer) around a training run of
// the demo model or of a TorchScript model with data (debug_target.hpp), for VS Code and other DAP
// clients: on standard input and output (what an editor spawns), or on a loopback TCP port
// (docs/debugger.md). The launch request's arguments choose the run: {"fault": "log", "steps":
// 200, "seed": 1, "tier": "diagnose", "out": "run"} or {"model": "m.pt", "input": "x.npy",
// "labels": "y.npy"}.
#include <cstdio>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "commands.hpp"
#include "debug_target.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/ide/dap.hpp"
#include "tfdebug/session/session.hpp"

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
  int exit_code = 0;
  try {
    DebugTargetOptions launch;
    const auto text = [&](const char* key, std::string fallback) {
      const auto it = args.find(key);
      if (it == args.end()) return fallback;
      if (!it->is_string()) throw Error(std::string(key) + " expects a string");
      return it->get<std::string>();
    };
    const auto integer = [&](const char* key, std::int64_t fallback) {
      const auto it = args.find(key);
      if (it == args.end()) return fallback;
      if (!it->is_number_integer()) throw Error(std::string(key) + " expects an integer");
      return it->get<std::int64_t>();
    };
    if (!args.is_object() && !args.is_null()) throw Error("expected an object of arguments");
    launch.model = text("model", "");
    launch.input = text("input", "");
    launch.labels = text("labels", "");
    launch.demo = launch.model.empty();
    launch.steps = integer("steps", -1);
    const std::int64_t seed = integer("seed", 1);
    if (seed < 0) throw Error("seed expects an integer >= 0");
    launch.seed = static_cast<std::uint64_t>(seed);
    launch.fault = text("fault", "none");
    launch.tier = text("tier", "diagnose");
    launch.out = text("out", "");
    const DebugTarget target(launch);
    session.set_tier(target.tier());
    target.add_sinks(session);
    (void)target.run(
        session, [&] { return server->debugger()->aborted(); }, [](std::int64_t, std::optional<double>) {});
  } catch (const Error& e) {
    std::fprintf(stderr, "tfdebug dap: launch: %s\n", e.what());
    exit_code = 2;
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
  cmd->footer(
      "The launch request's arguments: fault, steps, seed, tier (as tfdebug demo's options), or model, "
      "input, "
      "labels (a TorchScript model with data, as tfdebug console's); out: a folder for shapes.json.");
  cmd->callback([options, &exit_code] { exit_code = run_dap(*options); });
}

}  // namespace tfdebug::cli
