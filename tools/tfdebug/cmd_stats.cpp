// tfdebug stats FILE: the stats kernel on a raw tensor dump (e.g. numpy's tofile(), a
// tensor's bytes written from C++, or a slice of any binary file via --offset).
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "commands.hpp"
#include "json_output.hpp"
#include "safe_text.hpp"
#include "terminal.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/core/histogram.hpp"
#include "tfdebug/core/quantile.hpp"
#include "tfdebug/core/stats.hpp"
#include "tfdebug/io/mapped_file.hpp"

namespace tfdebug::cli {
namespace {

constexpr int kMaxBins = 1'000'000;
constexpr int kMaxThreads = 1024;

struct StatsArgs {
  std::string path;
  std::string dtype = "f32";
  std::string shape;
  std::uint64_t offset = 0;
  std::string target;
  int bins = 24;
  std::vector<double> quantiles = {0.001, 0.01, 0.5, 0.99, 0.999};
  int threads = 0;
  std::string simd = "auto";
  bool exact = false;
  bool json = false;
};

// "1797,64", "1797x64" or "-1,64" (one -1 is inferred from the element count).
std::vector<std::int64_t> parse_shape(const std::string& text, std::int64_t elements) {
  std::vector<std::int64_t> shape;
  std::string token;
  int inferred = -1;
  auto flush = [&] {
    if (token.empty()) throw Error("--shape '" + text + "': empty dimension; expected e.g. 1797,64");
    std::size_t used = 0;
    long long value = 0;
    try {
      value = std::stoll(token, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != token.size() || value < -1) {
      throw Error("--shape '" + text + "': '" + token +
                  "' is not a dimension (a non-negative integer, or -1 once)");
    }
    if (value == -1) {
      if (inferred >= 0) throw Error("--shape '" + text + "': only one dimension may be -1");
      inferred = static_cast<int>(shape.size());
    }
    shape.push_back(value);
    token.clear();
  };
  for (char c : text) {
    if (c == ',' || c == 'x' || c == 'X') {
      flush();
    } else if (c != ' ') {
      token += c;
    }
  }
  flush();
  if (inferred >= 0) {
    std::int64_t known = 1;
    for (std::size_t i = 0; i < shape.size(); ++i) {
      if (static_cast<int>(i) != inferred) known *= shape[i];
    }
    if (known == 0 || elements % known != 0) {
      throw Error("--shape '" + text + "': " + std::to_string(elements) +
                  " elements cannot be split into that shape");
    }
    shape[static_cast<std::size_t>(inferred)] = elements / known;
  }
  return shape;
}

std::string percent(std::int64_t part, std::int64_t whole) {
  if (whole == 0) return "";
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, " (%.3g%%)",
                100.0 * static_cast<double>(part) / static_cast<double>(whole));
  return buffer;
}

// Note [Range used]: abs max ÷ the dtype's largest finite value, "3.571% of f16's range", and
// its headroom, the factor the values could grow by before they overflow, "28x headroom": a
// bigger headroom is more room. (Stats::range_used was called headroom, which read backwards.)
std::string range_used_text(double range_used, DType dtype) {
  const std::string of = " of " + std::string(dtype_name(dtype)) + "'s range";
  if (!(range_used > 0)) return "0%" + of + " (all zero)";
  if (range_used > 1) return format_number(100 * range_used) + "%" + of + " (beyond it)";
  return format_number(100 * range_used) + "%" + of + ", " + format_number(1 / range_used) + "x headroom";
}

int run_stats(const StatsArgs& args) {
  const DType dtype = parse_dtype(args.dtype);
  StatsOptions options;
  options.threads = args.threads;
  options.simd = args.simd;
  options.exact = args.exact;
  if (!args.target.empty()) options.target = parse_dtype(args.target);
  // Bounds on what the options ask for: a histogram of kMaxBins is 16 MB; more threads than
  // kMaxThreads only cost (the work is split in chunks over the cores there are).
  if (args.bins < 1 || args.bins > kMaxBins) {
    throw Error("--bins must be between 1 and " + std::to_string(kMaxBins) + ", got " +
                std::to_string(args.bins));
  }
  if (args.threads < 0 || args.threads > kMaxThreads) {
    throw Error("--threads must be between 0 (one per core) and " + std::to_string(kMaxThreads) + ", got " +
                std::to_string(args.threads));
  }
  for (double p : args.quantiles) {
    if (!(p >= 0 && p <= 1)) throw Error("--quantiles: " + std::to_string(p) + " is outside [0, 1]");
  }

  const io::MappedFile file(args.path);
  const std::size_t size = dtype_size(dtype);
  if (args.offset > file.bytes().size()) {
    throw Error(args.path + ": --offset " + std::to_string(args.offset) + " is past the end of the file (" +
                std::to_string(file.bytes().size()) + " bytes)");
  }
  const std::size_t available = file.bytes().size() - args.offset;
  std::vector<std::int64_t> shape;
  if (args.shape.empty()) {
    if (available % size != 0) {
      throw Error(args.path + ": " + std::to_string(available) + " bytes after offset " +
                  std::to_string(args.offset) + " are not a whole number of " +
                  std::string(dtype_name(dtype)) + " elements (" + std::to_string(size) +
                  " bytes each); pass --offset or check --dtype");
    }
    shape = {static_cast<std::int64_t>(available / size)};
  } else {
    shape = parse_shape(args.shape, static_cast<std::int64_t>(available / size));
    const std::int64_t n = checked_numel(shape, "--shape " + args.shape);
    std::size_t needed = 0;
    if (__builtin_mul_overflow(static_cast<std::size_t>(n), size, &needed) || needed != available) {
      throw Error(args.path + ": --shape " + args.shape + " of " + std::string(dtype_name(dtype)) +
                  " needs " + std::to_string(static_cast<std::uint64_t>(n) * size) +
                  " bytes, but the file has " + std::to_string(available) + " bytes after offset " +
                  std::to_string(args.offset));
    }
  }
  const TensorView view(file.bytes().data() + args.offset, dtype, shape);
  const Stats s = compute_stats(view, options);
  const Histogram histogram = s.finite() > 0 ? histogram_fixed(view, args.bins, s.min, s.max)
                                             : histogram_fixed(view, args.bins, 0, 0);
  std::vector<double> quantile_values;
  if (s.finite() > 0 && !args.quantiles.empty()) quantile_values = quantiles_exact(view, args.quantiles);

  if (args.json) {
    nlohmann::json out = {{"file", args.path},
                          {"dtype", std::string(dtype_name(dtype))},
                          {"shape", shape},
                          {"offset", args.offset},
                          {"simd", args.simd == "auto" ? best_simd_target() : args.simd},
                          {"stats", to_json(s)},
                          {"histogram", to_json(histogram)}};
    nlohmann::json q = nlohmann::json::array();
    for (std::size_t i = 0; i < quantile_values.size(); ++i) {
      q.push_back({{"p", args.quantiles[i]}, {"value", quantile_values[i]}});
    }
    out["quantiles"] = q;
    std::printf("%s\n", json_text(out).c_str());
    return 0;
  }

  const bool colour = use_colour(stdout);
  std::printf("%s  %s  %s elements\n", paint(terminal_safe(args.path), Tone::bold, colour).c_str(),
              view.describe().c_str(), format_count(s.count).c_str());
  KeyValueTable t;
  const Tone nonfinite_tone = s.nonfinite() > 0 ? Tone::bad : Tone::good;
  t.add("nan", paint(format_count(s.nan) + percent(s.nan, s.count), s.nan ? Tone::bad : Tone::plain, colour));
  t.add("+inf / -inf", paint(format_count(s.pos_inf) + " / " + format_count(s.neg_inf),
                             s.pos_inf + s.neg_inf ? Tone::bad : Tone::plain, colour));
  t.add("finite", paint(format_count(s.finite()) + percent(s.finite(), s.count), nonfinite_tone, colour));
  t.add("zero", format_count(s.zero) + percent(s.zero, s.count));
  t.add("negative / positive", format_count(s.negative) + " / " + format_count(s.positive));
  t.add("subnormal", paint(format_count(s.subnormal) + percent(s.subnormal, s.count),
                           s.subnormal ? Tone::warn : Tone::plain, colour));
  t.add("min / max", format_number(s.min) + " / " + format_number(s.max));
  t.add("abs max", format_number(s.abs_max) + "   smallest |x| > 0: " + format_number(s.min_abs_nonzero));
  t.add("mean ± std", format_number(s.mean) + " ± " + format_number(s.std));
  t.add("L1 / L2", format_number(s.l1) + " / " + format_number(s.l2));
  t.add("range used", range_used_text(s.range_used, dtype));
  if (s.target) {
    const TargetFit& f = *s.target;
    const Tone tone = f.overflow > 0 ? Tone::bad : (f.underflow > 0 ? Tone::warn : Tone::good);
    t.add("as " + std::string(dtype_name(f.dtype)),
          paint(range_used_text(f.range_used, f.dtype) + ", overflow " + format_count(f.overflow) +
                    percent(f.overflow, s.count) + ", flush to zero " + format_count(f.underflow) +
                    percent(f.underflow, s.count) + ", subnormal " + format_count(f.subnormal),
                tone, colour));
  }
  if (s.finite() > 0) {
    t.add("histogram", "[" + format_number(histogram.edges.front()) + " " + sparkline(histogram.counts) +
                           " " + format_number(histogram.edges.back()) + "]");
  }
  std::string q;
  for (std::size_t i = 0; i < quantile_values.size(); ++i) {
    if (!q.empty()) q += "  ";
    q += "p" + format_number(100 * args.quantiles[i]) + "=" + format_number(quantile_values[i]);
  }
  if (!q.empty()) t.add("quantiles", q);
  t.print(stdout);
  return 0;
}

}  // namespace

void register_stats(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<StatsArgs>();
  CLI::App* cmd = app.add_subcommand(
      "stats", "Statistics of a raw tensor file: NaN/Inf counts, range, moments, histogram, dtype fit");
  cmd->add_option("file", args->path, "Raw little-endian tensor data (e.g. numpy's ndarray.tofile)")
      ->required();
  cmd->add_option("--dtype", args->dtype,
                  "Element type: f64 f32 f16 bf16 f8_e4m3fn f8_e5m2 i8 i16 i32 i64 u8 bool")
      ->capture_default_str();
  cmd->add_option("--shape", args->shape, "Shape, e.g. 4096,4096 (one -1 is inferred); default 1-D");
  cmd->add_option("--offset", args->offset, "Bytes to skip at the start of the file")->capture_default_str();
  cmd->add_option("--target-dtype", args->target,
                  "Also measure how the values fit this dtype (f16, bf16, fp8-e4m3, fp8-e5m2)");
  cmd->add_option("--bins", args->bins, "Histogram bins over [min, max]")->capture_default_str();
  cmd->add_option("--quantiles", args->quantiles, "Probabilities for exact quantiles")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--threads", args->threads, "Worker threads (0 = one per core)")->capture_default_str();
  cmd->add_option("--simd", args->simd, "SIMD target: auto, reference, or one that `tfdebug doctor` lists")
      ->capture_default_str();
  cmd->add_flag("--exact", args->exact,
                "Widen every value to f64 before summing (see docs/stats.md, Precision)");
  cmd->add_flag("--json", args->json, "Machine-readable output (schema in docs/stats.md)");
  cmd->callback([args, &exit_code] { exit_code = run_stats(*args); });
}

}  // namespace tfdebug::cli
