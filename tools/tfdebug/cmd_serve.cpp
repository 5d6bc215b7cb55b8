// tfdebug serve RUN_DIR: the live dashboard (docs/dashboard.md) of a run directory: a finished run,
// or one that another process is still writing, followed by polling its files.
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>

#include "commands.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/serve/dashboard.hpp"
#include "tfdebug/serve/run_dir_feed.hpp"

namespace tfdebug::cli {
namespace {

struct ServeArgs {
  std::string run_dir;
  int port = 8080;
  std::string host = "127.0.0.1";
  double interval = 0.5;
};

volatile std::sig_atomic_t stop_requested = 0;
void on_stop(int) {
  stop_requested = 1;
}

int run_serve(const ServeArgs& args) {
  if (args.interval < 0.05 || args.interval > 60) throw Error("--interval: expected 0.05-60 seconds");
  if (args.port < 0 || args.port > 65535) throw Error("--port: expected 0-65535 (0: any free port)");
  serve::DashboardOptions options;
  options.host = args.host;
  options.port = args.port;
  options.title = args.run_dir;
  options.run_dir = args.run_dir;
  // The folder is checked before the port is taken.
  std::error_code ec;
  if (!std::filesystem::is_directory(args.run_dir, ec))
    throw Error(args.run_dir +
                ": not a folder: expected a run directory (RunConfig::run_dir, tfdebug demo --out)");
  const std::shared_ptr<serve::Dashboard> dashboard = serve::Dashboard::start(std::move(options));
  serve::RunDirFeed feed(args.run_dir, *dashboard);
  // Printed once: with a token (a host off loopback), the address is the key.
  std::printf("dashboard: %s\n", dashboard->url().c_str());
  std::printf("following %s (Ctrl-C stops)\n", args.run_dir.c_str());
  std::fflush(stdout);
  std::signal(SIGINT, on_stop);
  std::signal(SIGTERM, on_stop);
  bool complete = false;
  std::string last_error;
  while (!stop_requested) {
    if (!complete) {
      complete = feed.poll();
      if (complete) {
        std::printf("the run is complete: %lld steps\n", static_cast<long long>(feed.steps_sent()));
        std::fflush(stdout);
      }
      if (!feed.report_error().empty() && feed.report_error() != last_error) {
        last_error = feed.report_error();
        std::fprintf(stderr, "tfdebug serve: %s (read again at the next change)\n", last_error.c_str());
      }
    }
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(args.interval);
    while (!stop_requested && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return 0;
}

}  // namespace

void register_serve(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<ServeArgs>();
  CLI::App* cmd = app.add_subcommand(
      "serve", "Serve the live dashboard of a run directory: a finished run, or one still being written");
  cmd->add_option("run_dir", args->run_dir, "The run directory (RunConfig::run_dir, tfdebug demo --out)")
      ->required();
  cmd->add_option("--port", args->port, "Port to listen on (0: any free one; the address is printed)")
      ->capture_default_str();
  cmd->add_option(
         "--host", args->host,
         "Address to listen on; one that is not loopback requires the access token that is printed once")
      ->capture_default_str();
  cmd->add_option("--interval", args->interval, "Seconds between reads of the run's files")
      ->capture_default_str();
  cmd->footer(
      "\nThe page is the run's HTML report (docs/html-report.md), extended live as metrics.jsonl and\n"
      "report.json grow. Runs until Ctrl-C (or SIGTERM).\n"
      "Examples:\n"
      "  tfdebug serve runs/exp1\n"
      "  tfdebug serve runs/exp1 --port 0          any free port\n"
      "Exit codes: 0, 2 bad input (not a run directory, a port in use, a bad metrics.jsonl line).");
  cmd->callback([args, &exit_code] { exit_code = run_serve(*args); });
}

}  // namespace tfdebug::cli
