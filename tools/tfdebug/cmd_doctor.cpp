// tfdebug doctor: what this build and this machine offer, with a self-test of every SIMD target
// against the scalar reference. tfdebug dtypes: the facts about each element type.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <thread>
#include <vector>

#include "commands.hpp"
#include "json_output.hpp"
#include "terminal.hpp"
#include "tfdebug/core/stats.hpp"
#include "tfdebug/version.hpp"

namespace tfdebug::cli {
namespace {

// Stats of a fixed adversarial f32 input on `target` agree with the reference kernel.
bool self_test(const std::string& target) {
  std::vector<float> data(40000);
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(1.0f, 4.0f);
  for (float& x : data) x = normal(rng);
  data[7] = NAN;
  data[999] = -INFINITY;
  data[1234] = 1e-41f;
  data[39999] = 0.0f;
  const TensorView view(data.data(), DType::f32, {static_cast<std::int64_t>(data.size())});
  // Counts and extremes agree exactly; moments to 1e-12 in exact mode and to the documented
  // 1e-6 of the fast f32 block partials (docs/stats.md, Precision).
  for (const bool exact : {true, false}) {
    StatsOptions simd;
    simd.simd = target;
    simd.target = DType::f16;
    simd.exact = exact;
    StatsOptions reference = simd;
    reference.simd = "reference";
    const Stats a = compute_stats(view, simd);
    const Stats b = compute_stats(view, reference);
    const double tolerance = exact ? 1e-12 : 1e-6;
    const bool ok = a.nan == b.nan && a.neg_inf == b.neg_inf && a.subnormal == b.subnormal &&
                    a.zero == b.zero && a.min == b.min && a.max == b.max &&
                    a.target->overflow == b.target->overflow &&
                    std::fabs(a.mean - b.mean) <= tolerance * std::fabs(b.mean) &&
                    std::fabs(a.variance - b.variance) <= tolerance * b.variance;
    if (!ok) return false;
  }
  return true;
}

int run_doctor(bool json) {
  const auto targets = simd_targets();
  const unsigned threads = std::thread::hardware_concurrency();
  std::vector<std::pair<std::string, bool>> results;
  bool all_ok = true;
  for (const auto& t : targets) {
    results.emplace_back(t, self_test(t));
    all_ok = all_ok && results.back().second;
  }
  if (json) {
    nlohmann::json j = {{"version", TFDEBUG_VERSION_STRING},
                        {"compiler", __VERSION__},
                        {"hardware_threads", threads},
                        {"simd_best", best_simd_target()},
                        {"self_test_ok", all_ok}};
    nlohmann::json list = nlohmann::json::array();
    for (const auto& [name, ok] : results) list.push_back({{"target", name}, {"self_test_ok", ok}});
    j["simd_targets"] = list;
    std::printf("%s\n", json_text(j).c_str());
  } else {
    const bool colour = use_colour(stdout);
    std::printf("%s\n", paint("tfdebug " TFDEBUG_VERSION_STRING, Tone::bold, colour).c_str());
    KeyValueTable t;
    t.add("compiler", __VERSION__);
    t.add("hardware threads", std::to_string(threads));
    t.add("stats kernel", best_simd_target() + " (chosen at run time)");
    for (const auto& [name, ok] : results) {
      t.add("  " + name,
            paint(ok ? "self-test ok" : "self-test FAILED", ok ? Tone::good : Tone::bad, colour));
    }
    t.print(stdout);
  }
  if (!all_ok) {
    std::fprintf(stderr, "tfdebug: a SIMD target disagrees with the scalar reference; please report this\n");
    return 1;
  }
  return 0;
}

int run_dtypes(bool json) {
  if (json) {
    nlohmann::json list = nlohmann::json::array();
    for (DType d : all_dtypes()) {
      const DTypeInfo& i = dtype_info(d);
      list.push_back({{"name", std::string(i.name)},
                      {"size", i.size},
                      {"floating", i.is_floating},
                      {"has_infinity", i.has_infinity},
                      {"max_finite", i.max_finite},
                      {"lowest", i.lowest},
                      {"min_normal", i.min_normal},
                      {"min_subnormal", i.min_subnormal}});
    }
    std::printf("%s\n", json_text(list).c_str());
    return 0;
  }
  std::printf("  %-10s %5s %14s %14s %14s\n", "dtype", "bytes", "max finite", "min normal", "min subnormal");
  for (DType d : all_dtypes()) {
    const DTypeInfo& i = dtype_info(d);
    std::printf("  %-10s %5zu %14s %14s %14s\n", std::string(i.name).c_str(), i.size,
                format_number(i.max_finite).c_str(),
                i.is_floating ? format_number(i.min_normal).c_str() : "-",
                i.is_floating ? format_number(i.min_subnormal).c_str() : "-");
  }
  return 0;
}

}  // namespace

void register_doctor(CLI::App& app, int& exit_code) {
  auto json = std::make_shared<bool>(false);
  CLI::App* cmd = app.add_subcommand("doctor", "Check this build and machine: SIMD targets with a self-test");
  cmd->add_flag("--json", *json, "Machine-readable output");
  cmd->callback([json, &exit_code] { exit_code = run_doctor(*json); });
}

void register_dtypes(CLI::App& app, int& exit_code) {
  auto json = std::make_shared<bool>(false);
  CLI::App* cmd = app.add_subcommand("dtypes", "The element types tfdebug reads, with their ranges");
  cmd->add_flag("--json", *json, "Machine-readable output");
  cmd->callback([json, &exit_code] { exit_code = run_dtypes(*json); });
}

}  // namespace tfdebug::cli
