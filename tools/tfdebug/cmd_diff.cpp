// tfdebug diff A B: what changed between two checkpoints, in any formats tfdebug reads.
// Exit code: 0 when both hold the same names and shapes and every tensor is allclose; 1 when
// they differ (like diff(1)); 2 for bad input.
#include <fnmatch.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "commands.hpp"
#include "json_output.hpp"
#include "model_names.hpp"
#include "terminal.hpp"
#include "tfdebug/core/compare.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/core/tensor.hpp"
#include "tfdebug/io/model_file.hpp"

namespace tfdebug::cli {
namespace {

struct DiffArgs {
  std::string a, b;
  double rtol = 1e-5;
  double atol = 1e-8;
  std::string filter;
  bool json = false;
};

struct Changed {
  std::string name;
  Comparison c;
};

std::string shape_text(std::span<const std::int64_t> shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

Tensor dequantized(const QuantizedView& q) {
  Tensor out(DType::f32, q.shape);
  dequantize(q.format, q.data, q.blocks(), static_cast<float*>(out.data()));
  return out;
}

void run_diff(const DiffArgs& args) {
  if (!(args.rtol >= 0) || !(args.atol >= 0)) throw Error("--rtol and --atol must be non-negative");
  const io::ModelFile a = io::ModelFile::open(args.a);
  const io::ModelFile b = io::ModelFile::open(args.b);
  auto wanted = [&](const std::string& name) {
    return args.filter.empty() || fnmatch(args.filter.c_str(), name.c_str(), 0) == 0;
  };
  std::map<std::string, const io::NamedTensor*> in_b;
  for (const auto& t : b.tensors()) {
    if (wanted(t.name)) in_b[t.name] = &t;
  }
  std::vector<std::string> missing, extra;
  std::vector<nlohmann::json> shape_changes, dtype_changes;
  std::vector<Changed> compared;
  for (const auto& t : a.tensors()) {
    if (!wanted(t.name)) continue;
    const auto it = in_b.find(t.name);
    if (it == in_b.end()) {
      missing.push_back(t.name);
      continue;
    }
    const io::NamedTensor& tb = *it->second;
    in_b.erase(it);
    if (t.dtype_name() != tb.dtype_name()) {
      dtype_changes.push_back(
          {{"name", t.name}, {"a", std::string(t.dtype_name())}, {"b", std::string(tb.dtype_name())}});
    }
    if (!std::equal(t.shape().begin(), t.shape().end(), tb.shape().begin(), tb.shape().end())) {
      shape_changes.push_back({{"name", t.name}, {"a", t.shape()}, {"b", tb.shape()}});
      continue;
    }
    // A quantised side is compared by its decoded values (one tensor in memory at a time).
    const Tensor decoded_a = t.quantized ? dequantized(*t.quantized) : Tensor();
    const Tensor decoded_b = tb.quantized ? dequantized(*tb.quantized) : Tensor();
    compared.push_back(
        {t.name, compare_tensors(t.quantized ? decoded_a.view() : t.view,
                                 tb.quantized ? decoded_b.view() : tb.view, args.rtol, args.atol)});
  }
  for (const auto& [name, t] : in_b) extra.push_back(name);
  // Rank by relative L2 change, the largest first, after tensors whose values became non-finite.
  std::vector<const Changed*> ranked;
  ranked.reserve(compared.size());
  for (const auto& c : compared) ranked.push_back(&c);
  std::stable_sort(ranked.begin(), ranked.end(), [](const Changed* x, const Changed* y) {
    // A value that became NaN or Inf outranks any finite change.
    if ((x->c.finiteness_changes > 0) != (y->c.finiteness_changes > 0)) return x->c.finiteness_changes > 0;
    return x->c.relative_l2 > y->c.relative_l2;
  });
  std::map<int, std::pair<double, double>> layers;  // layer -> (sum |a-b|^2, sum |a|^2)
  for (const auto& c : compared) {
    if (const auto layer = layer_index(c.name)) {
      layers[*layer].first += c.c.l2_diff * c.c.l2_diff;
      layers[*layer].second += c.c.l2_a * c.c.l2_a;
    }
  }
  const std::size_t not_close = static_cast<std::size_t>(
      std::count_if(compared.begin(), compared.end(), [](const Changed& c) { return !c.c.allclose; }));
  const bool same = missing.empty() && extra.empty() && shape_changes.empty() && not_close == 0;

  if (args.json) {
    nlohmann::json out = {{"a", args.a},
                          {"b", args.b},
                          {"rtol", args.rtol},
                          {"atol", args.atol},
                          {"missing", missing},
                          {"extra", extra},
                          {"shape_changes", shape_changes},
                          {"dtype_changes", dtype_changes},
                          {"identical", same}};
    out["tensors"] = nlohmann::json::array();
    for (const Changed* c : ranked) {
      nlohmann::json j = {{"name", c->name},
                          {"allclose", c->c.allclose},
                          {"mismatches", c->c.mismatches},
                          {"finiteness_changes", c->c.finiteness_changes},
                          {"max_abs_diff", json_number(c->c.max_abs_diff)},
                          {"max_rel_diff", json_number(c->c.max_rel_diff)},
                          {"cosine", json_number(c->c.cosine)},
                          {"relative_l2", json_number(c->c.relative_l2)}};
      j["first_diff_index"] =
          c->c.first_mismatch.empty() ? nlohmann::json(nullptr) : nlohmann::json(c->c.first_mismatch);
      out["tensors"].push_back(std::move(j));
    }
    out["layers"] = nlohmann::json::array();
    for (const auto& [layer, sums] : layers) {
      out["layers"].push_back(
          {{"layer", layer},
           {"relative_l2", json_number(sums.second > 0 ? std::sqrt(sums.first / sums.second) : 0.0)}});
    }
    std::printf("%s\n", out.dump(2).c_str());
  } else {
    const bool colour = use_colour(stdout);
    std::printf("%s\n%s\n", paint("a: " + args.a, Tone::bold, colour).c_str(),
                paint("b: " + args.b, Tone::bold, colour).c_str());
    std::printf(
        "%zu tensors compared, %zu not allclose (rtol %g, atol %g); %zu only in a, %zu only in b, "
        "%zu shape changes, %zu dtype changes\n",
        compared.size(), not_close, args.rtol, args.atol, missing.size(), extra.size(), shape_changes.size(),
        dtype_changes.size());
    for (const auto& n : missing)
      std::printf("  %s %s\n", paint("- only in a", Tone::warn, colour).c_str(), n.c_str());
    for (const auto& n : extra)
      std::printf("  %s %s\n", paint("+ only in b", Tone::warn, colour).c_str(), n.c_str());
    for (const auto& s : shape_changes) {
      std::printf("  %s %s: %s -> %s\n", paint("~ shape", Tone::bad, colour).c_str(),
                  s["name"].get<std::string>().c_str(), s["a"].dump().c_str(), s["b"].dump().c_str());
    }
    for (const auto& s : dtype_changes) {
      std::printf("  ~ dtype %s: %s -> %s\n", s["name"].get<std::string>().c_str(),
                  s["a"].get<std::string>().c_str(), s["b"].get<std::string>().c_str());
    }
    if (!ranked.empty()) {
      std::printf("\n  %-36s %9s %10s %12s %12s %10s %12s  %s\n", "changed most first", "allclose",
                  "non-finite", "max |a-b|", "max rel", "cosine", "rel L2", "first diff");
      for (const Changed* c : ranked) {
        std::printf("  %-36s %9s %10s %12s %12s %10s %12s  %s\n", c->name.c_str(),
                    c->c.allclose ? "yes" : "NO",
                    c->c.finiteness_changes ? format_count(c->c.finiteness_changes).c_str() : "-",
                    format_number(c->c.max_abs_diff).c_str(), format_number(c->c.max_rel_diff).c_str(),
                    format_number(c->c.cosine).c_str(), format_number(c->c.relative_l2).c_str(),
                    c->c.first_mismatch.empty() ? "-" : shape_text(c->c.first_mismatch).c_str());
      }
    }
    if (layers.size() > 1) {
      std::printf("\n  %-6s %12s\n", "layer", "rel L2");
      for (const auto& [layer, sums] : layers) {
        std::printf("  %-6d %12s\n", layer,
                    format_number(sums.second > 0 ? std::sqrt(sums.first / sums.second) : 0.0).c_str());
      }
    }
  }
  std::fflush(stdout);
  if (!same) std::exit(1);
}

}  // namespace

void register_diff(CLI::App& app) {
  auto args = std::make_shared<DiffArgs>();
  CLI::App* cmd =
      app.add_subcommand("diff", "What changed between two checkpoints (any formats tfdebug reads)");
  cmd->add_option("a", args->a, "The first checkpoint (file, index or folder)")->required();
  cmd->add_option("b", args->b, "The second checkpoint")->required();
  cmd->add_option("--rtol", args->rtol, "Relative tolerance of allclose")->capture_default_str();
  cmd->add_option("--atol", args->atol, "Absolute tolerance of allclose")->capture_default_str();
  cmd->add_option("--filter", args->filter, "Only tensors whose name matches this glob");
  cmd->add_flag("--json", args->json, "Machine-readable output (schema in docs/diff.md)");
  cmd->footer("Exit code: 0 same names, shapes and allclose values; 1 differences; 2 bad input.");
  cmd->callback([args] { run_diff(*args); });
}

}  // namespace tfdebug::cli
