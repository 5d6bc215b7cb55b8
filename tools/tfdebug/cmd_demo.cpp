// tfdebug demo: trains a small transformer LM with LibTorch, optionally with an injected fault,
// with tfdebug::torch attached to a tfdebug::Session, which diagnoses it (docs/live-debugging.md).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>
#include <string>
#include <thread>

#include "commands.hpp"
#include "demo_model.hpp"
#include "demo_profile.hpp"
#include "graph_demo.hpp"
#include "terminal.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/export/html_report.hpp"
#include "tfdebug/export/metrics_files.hpp"
#include "tfdebug/export/mlflow_sink.hpp"
#include "tfdebug/export/run_plots.hpp"
#include "tfdebug/export/tensorboard_sink.hpp"
#include "tfdebug/export/xlsx_sink.hpp"
#include "tfdebug/ide/shape_recorder.hpp"
#include "tfdebug/serve/dashboard.hpp"
#include "tfdebug/session/console_sink.hpp"
#include "tfdebug/session/session.hpp"
#include "tfdebug/torch/attach.hpp"

namespace tfdebug::cli {
namespace {

struct DemoOptions {
  std::int64_t steps = 200;
  std::uint64_t seed = 1;
  std::string fault = "none";
  std::string tier = "diagnose";
  std::int64_t every = 20;
  std::string out;
  bool profile = false;
  std::int64_t profile_steps = 5;
  std::int64_t trace_window = 0, trace_window_after = 1;  // the session with a step-windowed op trace
  std::string tensorboard, mlflow, xlsx;  // sinks of the run's metrics and findings (docs/exports.md)
  std::string plots;                      // pictures of the run, drawn from --out when it ends
  std::string html;                       // the run's self-contained page, written when it ends
  int serve = -1;                         // the live dashboard's port (docs/dashboard.md); -1: none
  std::string host = "127.0.0.1";
  double serve_linger = -1;  // seconds the dashboard stays after the run; < 0: until Ctrl-C
  std::int64_t step_delay_ms = 0;
};

volatile std::sig_atomic_t interrupted = 0;
void on_interrupt(int) {
  interrupted = 1;
}

// After the run: the dashboard stays up for the browsers watching it, `linger` seconds or, when
// negative, until SIGINT/SIGTERM.
void keep_serving(const serve::Dashboard& dashboard, double linger) {
  if (linger < 0) {
    std::printf("the run ended; the dashboard stays at %s until Ctrl-C\n", dashboard.url().c_str());
  } else if (linger > 0) {
    std::printf("the run ended; the dashboard stays for %g s\n", linger);
  }
  std::fflush(stdout);
  std::signal(SIGINT, on_interrupt);
  std::signal(SIGTERM, on_interrupt);
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(std::max(linger, 0.0));
  while (!interrupted && (linger < 0 || std::chrono::steady_clock::now() < until))
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
}

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Runs the training loop with the adapter attached to `sink`; prints the loss every `every` steps.
void train(const demo::DemoConfig& config, demo::DemoTrainer& trainer, ObservationSink& sink,
           std::int64_t every, std::int64_t step_delay_ms) {
  auto debug = tfdebug::torch::attach(sink, trainer.model());
  for (std::int64_t step = 0; step < config.steps; ++step) {
    // --step-delay-ms: a run slow enough to watch (docs/dashboard.md).
    if (step_delay_ms > 0 && step > 0) std::this_thread::sleep_for(std::chrono::milliseconds(step_delay_ms));
    // Handed over as a callable, a step that goes bad in watch is replayed in diagnose.
    const double loss = debug.step(step, [&] { return trainer.train_step(); }).value_or(kNaN);
    if (every > 0 && (step % every == 0 || step + 1 == config.steps)) {
      std::printf("step %5lld  loss %s\n", static_cast<long long>(step), loss_text(loss).c_str());
    }
  }
}

int run_demo(const DemoOptions& options) {
  demo::DemoConfig config;
  config.steps = options.steps;
  config.seed = options.seed;
  auto fault = demo::parse_fault(options.fault);
  if (!fault)
    throw Error("--fault: unknown fault '" + options.fault + "'; expected " + std::string(demo::kFaultNames));
  config.fault = *fault;
  if (options.tier != "watch" && options.tier != "diagnose") {
    throw Error("--tier: expected watch or diagnose, got '" + options.tier + "'");
  }
  if (config.steps < 1) throw Error("--steps: expected at least 1");
  if (!options.plots.empty() && (options.out.empty() || options.profile))
    throw Error("--plots needs --out DIR (the pictures are drawn from its metrics.jsonl) and no --profile");
  if (!options.html.empty() && (options.out.empty() || options.profile))
    throw Error("--html needs --out DIR (the page is written from its report.json) and no --profile");
  if (options.trace_window != 0 && (options.profile || options.out.empty()))
    throw Error("--trace-window needs --out DIR and cannot be combined with --profile");
  if (options.serve < -1 || options.serve > 65535)
    throw Error("--serve: expected a port, 0-65535 (0: any free one)");
  if (options.serve >= 0 && options.profile)
    throw Error(
        "--serve shows a diagnosed run, which --profile does not run: use --trace-window K --out DIR (the "
        "page shows the profile of the steps around the first error)");
  if (options.serve < 0 && options.host != "127.0.0.1") throw Error("--host needs --serve PORT");
  if (options.step_delay_ms < 0 || options.step_delay_ms > 60000)
    throw Error("--step-delay-ms: expected 0-60000");
  demo::DemoTrainer trainer(config);
  std::printf(
      "tfdebug demo: transformer LM, %lld blocks, d_model %lld, %lld heads, %lld parameters; copy task; "
      "fault %s; %s; seed %llu\n",
      static_cast<long long>(config.layers), static_cast<long long>(config.d_model),
      static_cast<long long>(config.heads), static_cast<long long>(trainer.parameter_count()),
      options.fault.c_str(),
      (options.profile ? "op profiler"
                       : "tier " + options.tier + "; " + std::to_string(config.steps) + " steps")
          .c_str(),
      static_cast<unsigned long long>(config.seed));
  if (options.profile) {
    run_demo_profile(config, trainer, {.steps = options.profile_steps, .out = options.out});
    return 0;
  }
  RunConfig run;
  run.tier = options.tier == "watch" ? Tier::watch : Tier::diagnose;
  if (!options.out.empty()) run.run_dir = options.out;
  Session session(run);
  session.add_sink(std::make_shared<ConsoleSink>(stdout, use_colour(stdout)));  // --color, NO_COLOR, TERM
  if (!options.out.empty()) {
    session.add_sink(
        std::make_shared<JsonlMetricsSink>(std::filesystem::path(options.out) / "metrics.jsonl"));
    session.add_sink(std::make_shared<CsvMetricsSink>(std::filesystem::path(options.out) / "metrics.csv"));
    // Every tensor's shape and dtype by module, for editors (docs/debugger.md).
    session.add_sink(
        std::make_shared<ide::ShapeRecorder>((std::filesystem::path(options.out) / "shapes.json").string()));
  }
  if (!options.tensorboard.empty()) session.add_sink(std::make_shared<TensorBoardSink>(options.tensorboard));
  if (!options.mlflow.empty()) {
    session.add_sink(std::make_shared<MlflowSink>(options.mlflow, "tfdebug demo", "fault " + options.fault,
                                                  session.config()));
  }
  if (!options.xlsx.empty()) session.add_sink(std::make_shared<XlsxSink>(options.xlsx, session.config()));
  std::shared_ptr<serve::Dashboard> dashboard;
  if (options.serve >= 0) {
    serve::DashboardOptions dashboard_options;
    dashboard_options.host = options.host;
    dashboard_options.port = options.serve;
    dashboard_options.title = "tfdebug demo --fault " + options.fault;
    dashboard_options.run_dir = options.out;
    dashboard_options.config = session.config().entries();
    dashboard = serve::Dashboard::start(std::move(dashboard_options));
    session.add_sink(dashboard);
    // Printed once: with a token (a host off loopback), the address is the key.
    std::printf("dashboard: %s\n", dashboard->url().c_str());
    std::fflush(stdout);
  }
  if (options.trace_window != 0) {
    train_with_trace_window(config, trainer, session,
                            {options.trace_window, options.trace_window_after, options.every, options.out});
  } else {
    train(config, trainer, session, options.every, options.step_delay_ms);
  }
  const RunSummary summary = session.finish();
  std::printf("copy accuracy on a fresh batch: %.2f\n", trainer.evaluate());
  if (!options.out.empty()) {
    // The trained model's graph beside the run's files: Netron opens it, the HTML report draws it.
    const std::filesystem::path graph_path = std::filesystem::path(options.out) / "model.onnx";
    write_demo_graph(demo_graph(trainer), graph_path.string());
    std::printf("run directory: %s (report.json; model.onnx: the trained model's graph)\n",
                options.out.c_str());
    if (dashboard) dashboard->load_run_files();  // the graph, now that model.onnx is there
  }
  if (!options.html.empty()) {
    const HtmlReportWritten page = write_run_html(options.out, options.html);
    std::printf("wrote %s (%ju KB)\n", options.html.c_str(), page.bytes / 1024);
  }
  if (!options.plots.empty()) {
    const RunPlots plots = write_run_plots(options.out, options.plots);
    std::printf("plots: %zu pictures in %s\n", plots.files.size(), options.plots.c_str());
  }
  const bool error = std::any_of(summary.findings.begin(), summary.findings.end(),
                                 [](const Finding& f) { return f.severity == Severity::error; });
  std::fflush(stdout);
  if (dashboard) keep_serving(*dashboard, options.serve_linger);
  return error ? 1 : 0;  // everything attached is gone by now: `train` detached on return
}

}  // namespace

void register_demo(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<DemoOptions>();
  auto* cmd = app.add_subcommand("demo",
                                 "Train a small transformer LM with LibTorch, optionally with an injected "
                                 "fault, and find where its first non-finite value came from");
  cmd->add_option("--steps", options->steps, "Training steps")->capture_default_str();
  cmd->add_option("--seed", options->seed, "Random seed (weights and data)")->capture_default_str();
  cmd->add_option("--fault", options->fault, "Injected fault: " + std::string(demo::kFaultNames))
      ->capture_default_str();
  cmd->add_option("--tier", options->tier, "What tfdebug observes: watch or diagnose")->capture_default_str();
  cmd->add_option("--out", options->out,
                  "Run directory: report.json, flight_recorder.json, metrics.jsonl, metrics.csv and "
                  "model.onnx, the trained model's graph (with --profile: the trace and profile files)");
  cmd->add_option(
      "--tensorboard", options->tensorboard,
      "Also write the run's metrics, histograms and findings as a TensorBoard run in this folder");
  cmd->add_option(
      "--html", options->html,
      "When the run ends, write its self-contained HTML report here (docs/html-report.md); needs --out");
  cmd->add_option("--plots", options->plots,
                  "When the run ends, draw it into this folder (loss, per-module gradient health over steps; "
                  "docs/visualization.md); needs --out");
  cmd->add_option("--mlflow", options->mlflow, "Also log the run in this MLflow file store (e.g. ./mlruns)");
  cmd->add_option("--xlsx", options->xlsx,
                  "Also write the run's findings and metrics to this Excel workbook");
  cmd->add_option("--every", options->every, "Print the loss every N steps (0: never)")
      ->capture_default_str();
  cmd->add_option("--serve", options->serve,
                  "Serve the live dashboard on this port while the run trains (docs/dashboard.md; 0: any "
                  "free port); it prints the address");
  cmd->add_option("--host", options->host,
                  "With --serve: the address to listen on; one that is not loopback requires the access "
                  "token that is printed once")
      ->capture_default_str();
  cmd->add_option("--serve-linger", options->serve_linger,
                  "With --serve: seconds the dashboard stays after the run (default: until Ctrl-C)");
  cmd->add_option("--step-delay-ms", options->step_delay_ms,
                  "Sleep this long between steps: a run slow enough to watch live")
      ->capture_default_str();
  cmd->add_flag(
      "--profile", options->profile,
      "Profile training steps after a warm-up instead: per-layer time, FLOPs, memory; files in --out");
  cmd->add_option("--profile-steps", options->profile_steps, "Steps profiled with --profile")
      ->capture_default_str();
  cmd->add_option("--trace-window", options->trace_window,
                  "Also profile ops and keep the trace of the K steps before the first error-level "
                  "finding (or the last K steps) in --out (docs/profiling.md)");
  cmd->add_option("--trace-window-after", options->trace_window_after,
                  "With --trace-window: steps kept after the first error's step")
      ->capture_default_str();
  cmd->footer(
      "Exit 0 when no error-level finding was made, 1 when one was (it is reported), 2 for bad options.");
  cmd->callback([options, &exit_code] { exit_code = run_demo(*options); });
}

std::string loss_text(double loss) {
  if (std::isnan(loss)) return "nan";
  if (std::isinf(loss)) return loss > 0 ? "inf" : "-inf";
  char text[32];
  std::snprintf(text, sizeof text, "%.4f", loss);
  return text;
}

}  // namespace tfdebug::cli
