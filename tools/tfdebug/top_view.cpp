#include "top_view.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "safe_text.hpp"

namespace tfdebug::cli {
namespace {

std::string plural(std::int64_t n, const char* one, const char* many) {
  return format_count(n) + " " + (n == 1 ? one : many);
}

// The first `width` columns of text (code points; the text has no escapes).
std::string clip(const std::string& text, int width) {
  std::string out;
  int columns = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if ((c & 0xC0) != 0x80) {
      if (columns == width) break;
      ++columns;
    }
    out += text[i];
  }
  return out;
}

// What the run is doing first, where it is last: on a narrow terminal the path is what is cut.
std::string header(const RunFollower& run, RunFollower::Clock::time_point now) {
  std::string text = "tfdebug top  ";
  if (run.last_step()) {
    text +=
        "step " + std::to_string(*run.last_step()) + " (" + plural(run.steps(), "step", "steps") + " read)";
  } else {
    text += run.metrics_found() ? "no step yet" : "waiting for metrics.jsonl";
  }
  if (const auto rate = run.step_rate(now)) {
    char buffer[48];
    std::snprintf(buffer, sizeof buffer, "  %.3g steps/s", *rate);
    text += buffer;
  }
  const bool finished = run.report() && run.report()->summary.complete;
  if (run.report()) text += finished ? "  finished" : "  running (or killed)";
  if (const auto idle = run.idle_seconds(now); idle && *idle >= 10 && !finished)
    text += "  no new step for " + std::to_string(static_cast<long long>(*idle)) + " s";
  return text + "  " + terminal_safe(run.run_dir().string());
}

// Newest first: the step a finding last tripped at, then severity.
std::vector<const Finding*> newest_findings(const RunReport& report) {
  std::vector<const Finding*> out;
  for (const Finding& f : report.summary.findings) out.push_back(&f);
  std::stable_sort(out.begin(), out.end(), [](const Finding* a, const Finding* b) {
    const std::int64_t la = std::max(a->step, a->last_step), lb = std::max(b->step, b->last_step);
    if (la != lb) return la > lb;
    return a->severity > b->severity;
  });
  return out;
}

Tone tone_of(Severity s) {
  switch (s) {
    case Severity::error:
      return Tone::bad;
    case Severity::warning:
      return Tone::warn;
    case Severity::info:
      return Tone::plain;
  }
  return Tone::plain;
}

std::vector<TopLine> findings_lines(const RunFollower& run, int width, int max_lines) {
  std::vector<TopLine> out;
  if (!run.report()) {
    out.push_back({run.report_error().empty() ? "findings: no report.json yet"
                                              : "findings: " + terminal_safe(run.report_error()),
                   Tone::dim});
    return out;
  }
  const RunSummary& s = run.report()->summary;
  std::int64_t counts[3] = {0, 0, 0};
  for (const Finding& f : s.findings) ++counts[static_cast<int>(f.severity)];
  std::string title = "findings: " + plural(counts[2], "error", "errors") + ", " +
                      plural(counts[1], "warning", "warnings") + ", " + format_count(counts[0]) + " info";
  if (!s.findings.empty()) title += " (newest first)";
  out.push_back({title, Tone::bold});
  if (!run.report_error().empty())
    out.push_back({"report.json: " + terminal_safe(run.report_error()), Tone::dim});
  const auto newest = newest_findings(*run.report());
  const std::size_t room = static_cast<std::size_t>(std::max(0, max_lines - static_cast<int>(out.size())));
  for (std::size_t i = 0; i < newest.size() && i < room; ++i) {
    const Finding& f = *newest[i];
    const bool last_line = i + 1 == room && newest.size() > room;
    if (last_line) {
      out.push_back({"  ... " + plural(static_cast<std::int64_t>(newest.size() - i), "more", "more") +
                         " (tfdebug report " + terminal_safe(run.run_dir().string()) + ")",
                     Tone::dim});
      break;
    }
    char severity[16];
    std::snprintf(severity, sizeof severity, "%-7s", std::string(severity_name(f.severity)).c_str());
    std::string text = "  " + std::string(severity) + " step " + std::to_string(f.step);
    if (f.count > 1) text += "-" + std::to_string(f.last_step) + " (x" + std::to_string(f.count) + ")";
    text += "  " + terminal_safe(f.rule);
    if (!f.module.empty()) text += "  " + terminal_safe(f.module);
    text += ": " + terminal_safe(f.message);
    out.push_back({clip(text, width), tone_of(f.severity)});
  }
  return out;
}

std::vector<TopLine> gradient_lines(const RunFollower& run, int width, int max_lines, viz::Glyphs glyphs) {
  std::vector<const ModuleMetrics*> modules;
  for (const ModuleMetrics& m : run.latest_modules()) {
    if (m.grad_norm) modules.push_back(&m);
  }
  std::vector<TopLine> out;
  if (modules.empty() || max_lines < 2) return out;
  const std::size_t room = static_cast<std::size_t>(max_lines - 1);
  std::size_t hidden = 0;
  if (modules.size() > room) {
    // Too many to show: the largest and the smallest norms (exploding and vanishing gradients),
    // with a line saying how many are in between.
    std::stable_sort(modules.begin(), modules.end(), [](const ModuleMetrics* a, const ModuleMetrics* b) {
      const double x = *a->grad_norm, y = *b->grad_norm;
      if (std::isnan(x) != std::isnan(y)) return std::isnan(x);  // NaN first: the worst news
      return x > y;
    });
    const std::size_t shown = room - 1;
    hidden = modules.size() - shown;
    const std::size_t top = (shown + 1) / 2;
    std::vector<const ModuleMetrics*> keep(modules.begin(),
                                           modules.begin() + static_cast<std::ptrdiff_t>(top));
    keep.insert(keep.end(), modules.end() - static_cast<std::ptrdiff_t>(shown - top), modules.end());
    modules = std::move(keep);
  }
  out.push_back({"gradient norm per module, step " + std::to_string(run.last_step().value_or(0)) +
                     (hidden > 0 ? " (largest and smallest; log scale)" : " (log scale)"),
                 Tone::bold});
  viz::TerminalBars bars;
  bars.scale = viz::Scale::log;
  for (const ModuleMetrics* m : modules) {
    bars.labels.push_back(terminal_safe(m->module.empty() ? "(top level)" : m->module));
    bars.values.push_back(*m->grad_norm);
  }
  const auto lines =
      viz::render_terminal(bars, {.width = width - 2, .height = 0, .glyphs = glyphs, .colour = false});
  const std::size_t top = hidden > 0 ? (modules.size() + 1) / 2 : lines.size();
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (i == top)
      out.push_back({"  ... " + format_count(static_cast<std::int64_t>(hidden)) + " more", Tone::dim});
    out.push_back({"  " + lines[i], std::isfinite(bars.values[i]) ? Tone::plain : Tone::bad});
  }
  return out;
}

}  // namespace

std::vector<TopLine> top_view(const RunFollower& run, RunFollower::Clock::time_point now,
                              const TopViewOptions& options) {
  const int width = std::max(options.width, 20);
  const bool fixed = options.height > 0;
  const int height = fixed ? std::max(options.height, 8) : 60;
  std::vector<TopLine> out;
  out.push_back({clip(header(run, now), width), Tone::bold});
  const int footer = fixed && options.footer ? 1 : 0;
  int left = height - 1 - footer;

  // Findings and gradients take what they need up to a third each; the loss plot the rest.
  const int third = std::max(3, left / 3);
  std::vector<TopLine> findings = findings_lines(run, width, std::min(third, left - 6));
  std::vector<TopLine> gradients = gradient_lines(
      run, width, std::min(third, left - 6 - static_cast<int>(findings.size())), options.glyphs);
  const int plot_height = fixed ? left - static_cast<int>(findings.size() + gradients.size()) : 16;
  if (!run.loss_values().empty() && plot_height >= 6) {
    viz::TerminalLinePlot plot;
    plot.title = "loss";
    plot.series.push_back({.name = "loss", .x = run.loss_steps(), .y = run.loss_values()});
    for (auto& line : viz::render_terminal(
             plot, {.width = width, .height = plot_height, .glyphs = options.glyphs, .colour = false}))
      out.push_back({std::move(line), Tone::plain});
  } else if (plot_height >= 1) {
    out.push_back(
        {run.metrics_found() ? "loss: no loss in metrics.jsonl yet" : "loss: waiting for metrics.jsonl",
         Tone::dim});
    for (int i = 1; i < plot_height && fixed; ++i) out.push_back({"", Tone::plain});
  }
  out.insert(out.end(), findings.begin(), findings.end());
  out.insert(out.end(), gradients.begin(), gradients.end());
  if (fixed) {
    while (static_cast<int>(out.size()) < height - footer) out.push_back({"", Tone::plain});
    out.resize(static_cast<std::size_t>(height - footer));
    if (footer) {
      char buffer[96];
      std::snprintf(buffer, sizeof buffer, "q quit   refresh every %.3g s", options.interval_s);
      out.push_back({clip(buffer, width), Tone::dim});
    }
  }
  return out;
}

}  // namespace tfdebug::cli
