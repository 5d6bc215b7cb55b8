// tfdebug regress BASELINE CURRENT: compares two Google Benchmark JSON files (run with
// --benchmark_repetitions=N --benchmark_format=json) benchmark by benchmark, or two profile.json
// files of `tfdebug demo --profile` op by op (self time per step), with the
// Mann-Whitney U test, Cliff's delta and a confidence interval for the change
// (docs/profiling.md). Exit code 1 on a significant slowdown beyond --threshold.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "commands.hpp"
#include "json_output.hpp"
#include "profile_json.hpp"
#include "safe_text.hpp"
#include "terminal.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/core/read_file.hpp"
#include "tfdebug/profile/regression.hpp"

namespace tfdebug::cli {
namespace {

struct RegressArgs {
  std::string baseline;
  std::string current;
  double threshold_percent = 5.0;
  double alpha = 0.05;
  std::string metric = "real";
  bool json = false;
};

struct Samples {
  std::vector<double> real_ns;
  std::vector<double> cpu_ns;
};

double unit_to_ns(const std::string& unit, const std::string& path) {
  if (unit == "ns") return 1.0;
  if (unit == "us") return 1e3;
  if (unit == "ms") return 1e6;
  if (unit == "s") return 1e9;
  throw Error(path + ": unknown time_unit '" + unit + "'");
}

// A profile.json (`tfdebug demo --profile`): op -> its self time in each profiled step.
std::map<std::string, Samples> read_profile_series(const nlohmann::json& doc, const std::string& path,
                                                   std::vector<std::string>& order) {
  if (!doc.contains("series") || !doc["series"].is_array())
    throw Error(path + ": profile.json without a \"series\" array of per-step op times");
  std::map<std::string, Samples> out;
  for (const auto& s : doc["series"]) {
    if (!s.is_object() || !s.contains("op") || !s["op"].is_string() || !s.contains("step_self_ns") ||
        !s["step_self_ns"].is_array())
      throw Error(path + ": a series entry needs \"op\" (string) and \"step_self_ns\" (array)");
    const auto name = s["op"].get<std::string>();
    Samples samples;
    for (const auto& v : s["step_self_ns"]) {
      if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0)
        throw Error(path + ": series '" + name + "': step_self_ns holds a value that is not a time in ns");
      samples.real_ns.push_back(v.get<double>());
    }
    if (samples.real_ns.empty()) continue;
    samples.cpu_ns = samples.real_ns;
    if (!out.count(name)) order.push_back(name);
    out[name] = std::move(samples);
  }
  if (out.empty()) throw Error(path + ": profile.json with no per-step op times");
  return out;
}

// Benchmark name -> per-repetition times in ns, in file order (aggregates are skipped).
std::map<std::string, Samples> read_benchmarks(const std::string& path, std::vector<std::string>& order) {
  const std::string text = read_regular_file(path, std::uint64_t{1} << 30, "the benchmark results");
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw Error(path + ": not JSON (" + e.what() + ")");
  }
  if (is_profile_json(doc)) return read_profile_series(doc, path, order);
  if (!doc.is_object() || !doc.contains("benchmarks") || !doc["benchmarks"].is_array())
    throw Error(path +
                ": not Google Benchmark JSON (no \"benchmarks\" array; run with --benchmark_format=json)");
  std::map<std::string, Samples> out;
  for (const auto& b : doc["benchmarks"]) {
    if (!b.is_object() || !b.contains("name") || !b["name"].is_string())
      throw Error(path + ": a benchmark entry without a name");
    if (b.value("run_type", "iteration") != "iteration") continue;
    if (b.contains("error_occurred") && b["error_occurred"].is_boolean() && b["error_occurred"].get<bool>())
      continue;
    const std::string name = b.contains("run_name") && b["run_name"].is_string()
                                 ? b["run_name"].get<std::string>()
                                 : b["name"].get<std::string>();
    if (!b.contains("real_time") || !b["real_time"].is_number() || !b.contains("cpu_time") ||
        !b["cpu_time"].is_number())
      throw Error(path + ": benchmark '" + name + "' has no numeric real_time/cpu_time");
    const double scale = unit_to_ns(b.value("time_unit", std::string("ns")), path);
    const double real = b["real_time"].get<double>() * scale;
    const double cpu = b["cpu_time"].get<double>() * scale;
    if (!std::isfinite(real) || !std::isfinite(cpu) || real < 0 || cpu < 0)
      throw Error(path + ": benchmark '" + name + "' has a time that is negative or not finite");
    if (!out.count(name)) order.push_back(name);
    out[name].real_ns.push_back(real);
    out[name].cpu_ns.push_back(cpu);
  }
  if (out.empty()) throw Error(path + ": no benchmark runs (only aggregates or errors?)");
  return out;
}

std::string percent(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.2f%%", 100 * fraction);
  return buf;
}

nlohmann::json comparison_json(const profile::SampleComparison& c) {
  return {{"baseline_median_ns", c.baseline_median},
          {"current_median_ns", c.current_median},
          {"change", c.change},
          {"ci_low", c.change_low},
          {"ci_high", c.change_high},
          {"shift_ns", c.shift},
          {"effect_cliffs_delta", c.effect},
          {"u", c.test.u},
          {"p_value", c.test.p_value},
          {"exact", c.test.exact}};
}

int run_regress(const RegressArgs& args) {
  if (!(args.threshold_percent >= 0)) throw Error("--threshold must be a percentage >= 0");
  if (!(args.alpha > 0 && args.alpha < 1)) throw Error("--alpha must be between 0 and 1");
  const double threshold = args.threshold_percent / 100;
  std::vector<std::string> order;
  std::vector<std::string> ignored;
  const auto baseline = read_benchmarks(args.baseline, ignored);
  const auto current = read_benchmarks(args.current, order);
  // A gate that compares nothing must not pass: two files without a name in common (renamed
  // benchmarks, the wrong file, a profile.json against benchmark JSON) are an error.
  const bool any_shared = std::any_of(order.begin(), order.end(),
                                      [&](const std::string& name) { return baseline.contains(name); });
  if (!any_shared) {
    throw Error("nothing matched: none of the " + std::to_string(current.size()) + " names in " +
                args.current + " (e.g. '" + order.front() + "') is among the " +
                std::to_string(baseline.size()) + " in " + args.baseline + " (e.g. '" +
                baseline.begin()->first + "'), so nothing was compared");
  }
  nlohmann::json report;
  report["baseline"] = args.baseline;
  report["current"] = args.current;
  report["metric"] = args.metric;
  report["threshold"] = threshold;
  report["alpha"] = args.alpha;
  report["benchmarks"] = nlohmann::json::array();
  report["only_in_baseline"] = nlohmann::json::array();
  report["only_in_current"] = nlohmann::json::array();
  int failing = 0;
  using Align = Table::Align;
  Table table({{.header = "benchmark", .elidable = true, .minimum = 20},
               {.header = "n", .align = Align::right},
               {.header = "baseline", .align = Align::right},
               {.header = "current", .align = Align::right},
               {.header = "change", .align = Align::right},
               {.header = "95% CI", .align = Align::right, .droppable = true},
               {.header = "p", .align = Align::right, .droppable = true},
               {.header = "delta", .align = Align::right, .droppable = true},
               {.header = "grade"}},
              "");
  for (const std::string& name : order) {
    auto it = baseline.find(name);
    if (it == baseline.end()) {
      report["only_in_current"].push_back(name);
      continue;
    }
    const Samples& before = it->second;
    const Samples& after = current.at(name);
    const auto real = profile::compare_samples(before.real_ns, after.real_ns);
    const auto cpu = profile::compare_samples(before.cpu_ns, after.cpu_ns);
    const auto& gated = args.metric == "cpu" ? cpu : real;
    const profile::Severity severity = profile::grade(gated, args.alpha, threshold);
    const bool fails = severity == profile::Severity::kMinor || severity == profile::Severity::kMajor ||
                       severity == profile::Severity::kCritical;
    failing += fails ? 1 : 0;
    report["benchmarks"].push_back({{"name", name},
                                    {"n_baseline", gated.n_baseline},
                                    {"n_current", gated.n_current},
                                    {"real", comparison_json(real)},
                                    {"cpu", comparison_json(cpu)},
                                    {"grade", profile::severity_name(severity)},
                                    {"fails", fails}});
    if (!args.json) {
      const std::string ci = "[" + percent(gated.change_low) + ", " + percent(gated.change_high) + "]";
      const std::string n = std::to_string(gated.n_current);
      char p[32];
      char delta[32];
      std::snprintf(p, sizeof p, "%.3g", gated.test.p_value);
      std::snprintf(delta, sizeof delta, "%+.2f", gated.effect);
      table.add({terminal_safe(name), n, format_duration(gated.baseline_median),
                 format_duration(gated.current_median), percent(gated.change), ci, p, delta,
                 std::string(profile::severity_name(severity)) + (fails ? "  <- slower" : "")},
                fails ? Tone::bad : Tone::plain);
    }
  }
  for (const auto& [name, samples] : baseline)
    if (!current.count(name)) report["only_in_baseline"].push_back(name);
  report["failing"] = failing;
  if (args.json) {
    std::cout << json_text(report) << '\n';
  } else {
    table.print(stdout, terminal_columns(stdout), use_colour(stdout));
    std::printf("\n%s time, medians of repetitions; Mann-Whitney U (two-sided), Cliff's delta.\n",
                args.metric.c_str());
    for (const auto& name : report["only_in_baseline"])
      std::printf("only in baseline: %s\n", terminal_safe(name.get<std::string>()).c_str());
    for (const auto& name : report["only_in_current"])
      std::printf("only in current: %s\n", terminal_safe(name.get<std::string>()).c_str());
    std::printf("%d significant slowdown%s beyond %.1f%% (p < %g)\n", failing, failing == 1 ? "" : "s",
                args.threshold_percent, args.alpha);
  }
  return failing > 0 ? 1 : 0;
}

}  // namespace

void register_regress(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<RegressArgs>();
  CLI::App* cmd = app.add_subcommand(
      "regress", "Compare two Google Benchmark JSON runs (or two profile.json files) for slowdowns");
  cmd->add_option("baseline", args->baseline, "Google Benchmark JSON of the baseline")->required();
  cmd->add_option("current", args->current, "Google Benchmark JSON of the current run")->required();
  cmd->add_option("--threshold", args->threshold_percent, "Fail on significant slowdowns beyond this percent")
      ->capture_default_str();
  cmd->add_option("--alpha", args->alpha, "Significance level of the test")->capture_default_str();
  cmd->add_option("--metric", args->metric, "Which time gates the exit code")
      ->check(CLI::IsMember({"real", "cpu"}))
      ->capture_default_str();
  cmd->add_flag("--json", args->json, "Print the report as JSON");
  cmd->footer(
      "Exit code: 0 no significant slowdown beyond the threshold; 1 one or more; 2 bad input, or no "
      "benchmark in common.");
  cmd->callback([args, &exit_code] { exit_code = run_regress(*args); });
}

}  // namespace tfdebug::cli
