// tfdebug demo --profile (demo_profile.hpp).
#include "demo_profile.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "json_output.hpp"
#include "profile_json.hpp"
#include "terminal.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/export/chrome_trace.hpp"
#include "tfdebug/export/flame_graph.hpp"
#include "tfdebug/export/perfetto_trace.hpp"
#include "tfdebug/torch/anomaly_window.hpp"
#include "tfdebug/torch/attach.hpp"
#include "tfdebug/torch/profiler.hpp"

namespace tfdebug::cli {
namespace {

std::string bytes_text(double bytes) {
  char buf[32];
  if (bytes >= 1024.0 * 1024.0) {
    std::snprintf(buf, sizeof buf, "%.2f MiB", bytes / (1024.0 * 1024.0));
  } else if (bytes >= 1024.0) {
    std::snprintf(buf, sizeof buf, "%.1f KiB", bytes / 1024.0);
  } else {
    std::snprintf(buf, sizeof buf, "%.0f B", bytes);
  }
  return buf;
}

std::string rate_text(double flops, double ns) {
  if (ns <= 0 || flops <= 0) return "-";
  char buf[32];
  const double rate = flops / (ns / 1e9);
  std::snprintf(buf, sizeof buf, "%.2f GFLOP/s", rate / 1e9);
  return buf;
}

std::string mflops_text(double flops) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", flops / 1e6);
  return buf;
}

template <typename Write>
void write_file(const std::filesystem::path& path, Write write) {
  std::ofstream out(path, std::ios::binary);
  if (!out) throw Error(path.string() + ": cannot create");
  write(out);
  out.flush();
  if (!out) throw Error(path.string() + ": write failed");
}

void print_report(const profile::OpProfile& p, const DemoProfileOptions& options) {
  const auto steps = double(p.step_ns.size());
  const double total_ns = double(p.total_step_ns());
  std::vector<std::int64_t> sorted = p.step_ns;
  std::sort(sorted.begin(), sorted.end());
  const double median = double(sorted[sorted.size() / 2]);
  const double seconds = total_ns / 1e9;
  std::printf(
      "\nprofile: %lld steps after %lld warm-up, median step %s; %s MFLOP/step, %s; %.0f tokens/s, %.0f "
      "samples/s\n",
      static_cast<long long>(p.step_ns.size()), static_cast<long long>(options.warmup),
      format_duration(median).c_str(), mflops_text(p.total_flops() / steps).c_str(),
      rate_text(p.total_flops(), total_ns).c_str(), p.tokens_per_step * steps / seconds,
      p.samples_per_step * steps / seconds);
  std::printf("\nper layer (forward, backward and optimizer; per step; total includes submodules)\n");
  std::printf("  %-24s %12s %7s %12s %12s %14s\n", "module", "total", "share", "self", "MFLOP", "FLOP/s");
  std::vector<profile::ModuleStats> modules = p.modules;
  std::sort(modules.begin(), modules.end(),
            [](const profile::ModuleStats& a, const profile::ModuleStats& b) { return a.module < b.module; });
  for (const auto& m : modules) {
    const std::string name = m.module.empty() ? "(model)" : m.module;
    std::printf("  %-24s %12s %6.1f%% %12s %12s %14s\n", name.c_str(),
                format_duration(double(m.total_ns) / steps).c_str(), 100.0 * double(m.total_ns) / total_ns,
                format_duration(double(m.self_ns) / steps).c_str(),
                mflops_text(m.total_flops / steps).c_str(),
                rate_text(m.total_flops, double(m.total_ns)).c_str());
  }
  std::printf("\ntop %zu ops by self time\n", options.top);
  std::size_t rank = 1;
  for (const auto& b : profile::bottlenecks(p, options.top)) {
    std::printf("  %zu. %s\n", rank++, b.text.c_str());
  }
  if (!p.uncounted.empty()) {
    std::printf("\naten ops without a FLOP formula (FLOPs unknown, not counted)\n");
    for (const auto& u : p.uncounted) {
      std::printf("  %-36s %6llu calls %12s\n", u.op.c_str(), static_cast<unsigned long long>(u.calls),
                  format_duration(double(u.self_ns)).c_str());
    }
  }
  const auto& m = p.memory;
  if (m.reported) {
    std::int64_t alive = 0;
    for (const auto& a : m.alive_at_step_end) alive += a.bytes;
    std::printf(
        "\nmemory: peak %s live (c10 CPU allocator, allocated since profiling began) at step %lld in %s (%s, "
        "%s); "
        "%llu allocations, %s in all; %s alive at step ends\n",
        bytes_text(double(m.peak_bytes)).c_str(), static_cast<long long>(m.peak_step), m.peak_op.c_str(),
        m.peak_module.empty() ? "no module" : m.peak_module.c_str(),
        std::string(phase_name(m.peak_phase)).c_str(), static_cast<unsigned long long>(m.allocations),
        bytes_text(double(m.allocated_bytes)).c_str(), bytes_text(double(alive)).c_str());
    if (!m.rss_bytes.empty()) {
      std::printf("process: RSS %s", bytes_text(double(m.rss_bytes.back())).c_str());
      if (m.malloc_in_use_bytes >= 0)
        std::printf(", malloc in use %s (+ %s mmapped)", bytes_text(double(m.malloc_in_use_bytes)).c_str(),
                    bytes_text(double(m.malloc_mmap_bytes)).c_str());
      std::printf("\n");
    }
  } else {
    std::printf("\nmemory: the allocator reported nothing\n");
  }
}

std::filesystem::path output_dir(const std::string& out, const char* option) {
  if (out.empty()) throw Error(std::string(option) + " needs --out DIR for the trace and profile files");
  std::filesystem::path dir(out);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw Error(out + ": cannot create the directory (" + ec.message() + ")");
  return dir;
}

}  // namespace

void train_with_trace_window(const demo::DemoConfig& config, demo::DemoTrainer& trainer, Session& session,
                             const DemoTraceWindowOptions& options) {
  if (options.before < 1) throw Error("--trace-window: expected at least 1 step");
  if (options.after < 0) throw Error("--trace-window-after: expected 0 or more steps");
  const std::filesystem::path dir = output_dir(options.out, "--trace-window");
  torch::ProfilerOptions profiler_options;
  profiler_options.keep_steps_before = options.before;
  profiler_options.keep_steps_after = options.after;
  profiler_options.samples_per_step = double(config.batch);
  profiler_options.tokens_per_step = double(config.batch * 2 * config.length);
  profile::OpProfile p;
  {
    auto debug = torch::attach(session, trainer.model());
    auto profiler = std::make_shared<torch::Profiler>(trainer.model(), profiler_options);
    session.add_sink(std::make_shared<torch::AnomalyWindowSink>(profiler));
    for (std::int64_t step = 0; step < config.steps; ++step) {
      debug.step_begin(step);
      profiler->step_begin(step);
      const double loss = trainer.train_step();
      profiler->step_end(step);  // before the Session's end-of-step work, which is not the model's
      debug.step_end(step, loss);
      if (options.every > 0 && (step % options.every == 0 || step + 1 == config.steps)) {
        std::printf("step %5lld  loss %s\n", static_cast<long long>(step), loss_text(loss).c_str());
      }
    }
    p = profiler->stop();
  }
  write_file(dir / "trace.json", [&](std::ostream& out) { write_chrome_trace(p.trace, out); });
  write_file(dir / "trace.perfetto-trace", [&](std::ostream& out) { write_perfetto_trace(p.trace, out); });
  write_file(dir / "profile.speedscope.json", [&](std::ostream& out) { write_speedscope(p.trace, out); });
  // The report page and the live dashboard show the profile from this file (docs/html-report.md).
  write_file(dir / "profile.json",
             [&](std::ostream& out) { out << json_text(profile_to_json(p, kTopOps), 1) << '\n'; });
  std::size_t events = 0;
  for (const auto& thread : p.trace.threads) events += thread.events.size();
  if (p.window.first_step < 0) {
    std::printf("trace window: no step's events fit in the trace\n");
  } else if (p.window.anomaly_step >= 0) {
    std::printf("trace window: steps %lld-%lld around step %lld (%s), %zu events\n",
                static_cast<long long>(p.window.first_step), static_cast<long long>(p.window.last_step),
                static_cast<long long>(p.window.anomaly_step), p.window.anomaly.c_str(), events);
  } else {
    std::printf("trace window: no error-level finding; the last steps %lld-%lld, %zu events\n",
                static_cast<long long>(p.window.first_step), static_cast<long long>(p.window.last_step),
                events);
  }
  std::printf("wrote %s: trace.json (Chrome), trace.perfetto-trace, profile.speedscope.json, profile.json\n",
              options.out.c_str());
}

void run_demo_profile(const demo::DemoConfig& config, demo::DemoTrainer& trainer,
                      const DemoProfileOptions& options) {
  if (options.steps < 1) throw Error("--profile-steps: expected at least 1");
  const std::filesystem::path dir = output_dir(options.out, "--profile");
  for (std::int64_t i = 0; i < options.warmup; ++i) trainer.train_step();
  torch::ProfilerOptions profiler_options;
  profiler_options.samples_per_step = double(config.batch);
  profiler_options.tokens_per_step = double(config.batch * 2 * config.length);
  torch::Profiler profiler(trainer.model(), profiler_options);
  for (std::int64_t step = options.warmup; step < options.warmup + options.steps; ++step) {
    profiler.step_begin(step);
    trainer.train_step();
    profiler.step_end(step);
  }
  const profile::OpProfile p = profiler.stop();
  print_report(p, options);
  write_file(dir / "trace.json", [&](std::ostream& out) { write_chrome_trace(p.trace, out); });
  write_file(dir / "trace.perfetto-trace", [&](std::ostream& out) { write_perfetto_trace(p.trace, out); });
  write_file(dir / "profile.speedscope.json", [&](std::ostream& out) { write_speedscope(p.trace, out); });
  write_file(dir / "flame.svg", [&](std::ostream& out) { write_flame_graph_svg(p.trace, out); });
  write_file(dir / "profile.json",
             [&](std::ostream& out) { out << json_text(profile_to_json(p, options.top), 1) << '\n'; });
  std::printf(
      "\nwrote %s: trace.json (Chrome), trace.perfetto-trace, profile.speedscope.json, flame.svg, "
      "profile.json\n",
      options.out.c_str());
}

}  // namespace tfdebug::cli
