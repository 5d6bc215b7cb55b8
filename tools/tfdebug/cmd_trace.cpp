// tfdebug trace IN [-o OUT]: converts a Chrome trace we wrote into the other formats, or prints
// its summary (top self-time frames, per-thread totals) (docs/profiling.md).
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>

#include "commands.hpp"
#include "json_output.hpp"
#include "safe_text.hpp"
#include "terminal.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/core/read_file.hpp"
#include "tfdebug/export/chrome_trace.hpp"
#include "tfdebug/export/flame_graph.hpp"
#include "tfdebug/export/perfetto_trace.hpp"
#include "tfdebug/profile/trace.hpp"

namespace tfdebug::cli {
namespace {

struct TraceArgs {
  std::string input;
  std::string output;
  bool json = false;
  std::int64_t top = 10;
};

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

profile::Trace read_input(const std::string& path) {
  if (ends_with(path, ".speedscope.json") || ends_with(path, ".folded") || ends_with(path, ".svg") ||
      ends_with(path, ".pftrace") || ends_with(path, ".perfetto-trace"))
    throw Error(path + ": tfdebug trace reads Chrome trace JSON (.json); convert from that file");
  std::istringstream in(read_regular_file(path, std::uint64_t{4} << 30, "the trace"));
  return read_chrome_trace(in, path);
}

enum class OutputType { kChrome, kSpeedscope, kFolded, kSvg, kPerfetto };

// Decided before anything is created, so a wrong extension leaves no empty file behind.
OutputType output_type(const std::string& path) {
  if (ends_with(path, ".speedscope.json")) return OutputType::kSpeedscope;
  if (ends_with(path, ".json")) return OutputType::kChrome;
  if (ends_with(path, ".folded")) return OutputType::kFolded;
  if (ends_with(path, ".svg")) return OutputType::kSvg;
  if (ends_with(path, ".pftrace") || ends_with(path, ".perfetto-trace")) return OutputType::kPerfetto;
  throw Error(path +
              ": unknown output type; use .json (Chrome trace), .speedscope.json, .folded, .svg or .pftrace");
}

void write_output(const profile::Trace& trace, const std::string& path) {
  const OutputType type = output_type(path);
  std::ofstream out(path, std::ios::binary);
  if (!out) throw Error(path + ": cannot create");
  switch (type) {
    case OutputType::kSpeedscope:
      write_speedscope(trace, out);
      break;
    case OutputType::kChrome:
      write_chrome_trace(trace, out);
      break;
    case OutputType::kFolded:
      write_folded_stacks(trace, out);
      break;
    case OutputType::kSvg:
      write_flame_graph_svg(trace, out);
      break;
    case OutputType::kPerfetto:
      write_perfetto_trace(trace, out);
      break;
  }
  out.flush();
  if (!out) throw Error(path + ": write failed");
}

void print_summary(const profile::TraceSummary& summary, const std::string& input, std::size_t top) {
  std::printf("%s: %s span, %s\n\n", terminal_safe(input).c_str(),
              format_duration(static_cast<double>(summary.end_ns - summary.start_ns)).c_str(),
              plural(static_cast<std::int64_t>(summary.threads.size()), "thread").c_str());
  using Align = Table::Align;
  const std::size_t columns = terminal_columns(stdout);
  std::printf("top self time\n");
  Table frames({{.header = "frame", .elidable = true, .minimum = 20},
                {.header = "self", .align = Align::right},
                {.header = "total", .align = Align::right},
                {.header = "calls", .align = Align::right}});
  const std::size_t n = std::min(top, summary.frames.size());
  for (std::size_t i = 0; i < n; ++i) {
    const auto& f = summary.frames[i];
    frames.add({terminal_safe(f.name), format_duration(static_cast<double>(f.self_ns)),
                format_duration(static_cast<double>(f.total_ns)),
                format_count(static_cast<std::int64_t>(f.calls))});
  }
  frames.print(stdout, columns, false);
  std::printf("\nthreads\n");
  Table threads({{.header = "thread", .elidable = true, .minimum = 12},
                 {.header = "tid", .align = Align::right},
                 {.header = "busy", .align = Align::right},
                 {.header = "zones", .align = Align::right},
                 {.header = "events", .align = Align::right},
                 {.header = "dropped", .align = Align::right, .droppable = true},
                 {.header = "evicted", .align = Align::right, .droppable = true}});
  for (const auto& t : summary.threads) {
    threads.add(
        {terminal_safe(t.name), std::to_string(t.tid), format_duration(static_cast<double>(t.busy_ns)),
         format_count(static_cast<std::int64_t>(t.slices)), format_count(static_cast<std::int64_t>(t.events)),
         format_count(static_cast<std::int64_t>(t.dropped)),
         format_count(static_cast<std::int64_t>(t.evicted))});
  }
  threads.print(stdout, columns, false);
}

nlohmann::json summary_json(const profile::TraceSummary& summary, const std::string& input, std::size_t top) {
  nlohmann::json j;
  j["file"] = input;
  j["span_ns"] = summary.end_ns - summary.start_ns;
  j["frames"] = nlohmann::json::array();
  for (std::size_t i = 0; i < std::min(top, summary.frames.size()); ++i) {
    const auto& f = summary.frames[i];
    j["frames"].push_back(
        {{"name", f.name}, {"self_ns", f.self_ns}, {"total_ns", f.total_ns}, {"calls", f.calls}});
  }
  j["threads"] = nlohmann::json::array();
  for (const auto& t : summary.threads) {
    j["threads"].push_back({{"tid", t.tid},
                            {"name", t.name},
                            {"busy_ns", t.busy_ns},
                            {"zones", t.slices},
                            {"events", t.events},
                            {"dropped", t.dropped},
                            {"evicted", t.evicted}});
  }
  return j;
}

int run_trace(const TraceArgs& args) {
  if (args.top < 0) throw Error("--top must be 0 or more, got " + std::to_string(args.top));
  if (!args.output.empty()) output_type(args.output);  // fail before reading a large input
  const profile::Trace trace = read_input(args.input);
  if (!args.output.empty()) {
    write_output(trace, args.output);
    return 0;
  }
  const profile::TraceSummary summary = profile::summarize(trace);
  if (args.json) {
    std::cout << json_text(summary_json(summary, args.input, static_cast<std::size_t>(args.top))) << '\n';
  } else {
    print_summary(summary, args.input, static_cast<std::size_t>(args.top));
  }
  return 0;
}

}  // namespace

void register_trace(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<TraceArgs>();
  CLI::App* cmd = app.add_subcommand("trace", "Convert a Chrome trace (.json) or summarise it");
  cmd->add_option("input", args->input, "A Chrome trace JSON file (as tfdebug writes it)")->required();
  cmd->add_option(
      "-o,--output", args->output,
      "Write OUT instead of a summary: .json (Chrome), .speedscope.json, .folded, .svg or .pftrace");
  cmd->add_flag("--json", args->json, "Print the summary as JSON");
  cmd->add_option("--top", args->top, "How many frames the summary lists")->capture_default_str();
  cmd->callback([args, &exit_code] { exit_code = run_trace(*args); });
}

}  // namespace tfdebug::cli
