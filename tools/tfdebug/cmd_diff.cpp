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
#include <set>
#include <string>
#include <vector>

#include "commands.hpp"
#include "json_output.hpp"
#include "safe_text.hpp"
#include "terminal.hpp"
#include "tfdebug/core/compare.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/core/tensor.hpp"
#include "tfdebug/io/gguf_names.hpp"
#include "tfdebug/io/model_file.hpp"
#include "tfdebug/io/model_names.hpp"

namespace tfdebug::cli {

using io::gguf_permuted_heads;
using io::hf_name_of_gguf;
using io::layer_index;
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

// One side's tensor under the name it is matched by: its own, or the Hugging Face name of a
// llama.cpp GGUF tensor (with the heads whose query/key row permutation is undone).
struct Side {
  const io::NamedTensor* tensor;
  int permuted_heads = 0;
};

std::vector<std::pair<std::string, Side>> sides_of(const io::ModelFile& m, bool gguf_names) {
  std::vector<std::pair<std::string, Side>> out;
  for (const auto& t : m.tensors()) {
    std::optional<std::string> hf = gguf_names ? hf_name_of_gguf(t.name) : std::nullopt;
    out.push_back({hf ? *hf : t.name, {&t, hf ? gguf_permuted_heads(m, t.name) : 0}});
  }
  return out;
}

// Whether the two checkpoints share no name but would through llama.cpp's renaming.
bool needs_gguf_names(const io::ModelFile& gguf, const io::ModelFile& other) {
  if (gguf.format() != "gguf" || other.format() == "gguf") return false;
  std::set<std::string> names;
  for (const auto& t : other.tensors()) names.insert(t.name);
  bool any_mapped = false;
  for (const auto& t : gguf.tensors()) {
    if (names.contains(t.name)) return false;
    if (const auto hf = hf_name_of_gguf(t.name)) any_mapped = any_mapped || names.contains(*hf);
  }
  return any_mapped;
}

// The values of a side as a view (a quantised tensor decoded into `storage`), and for a
// permuted GGUF projection the view that reads its rows in Hugging Face order.
TensorView values_of(const Side& side, Tensor& storage, bool& contiguous_copy) {
  const io::NamedTensor& t = *side.tensor;
  TensorView v = t.view;
  if (t.quantized) {
    storage = dequantized(*t.quantized);
    v = storage.view();
  }
  contiguous_copy = false;
  if (side.permuted_heads == 0) return v;
  if (!v.is_contiguous()) {
    storage = Tensor::copy_of(v, DType::f64);
    v = storage.view();
  }
  const std::int64_t heads = side.permuted_heads;
  const std::int64_t rows = v.shape(0);
  const std::int64_t cols = v.rank() == 2 ? v.shape(1) : 1;
  if (v.rank() > 2 || rows % (2 * heads) != 0) return v;  // not the layout the permutation assumes
  contiguous_copy = true;
  return TensorView(v.data(), v.dtype(), {heads, rows / heads / 2, 2, cols}).transposed(1, 2);
}

// The same values in the 4-D [heads, 2, head_dim/2, cols] shape as a permuted GGUF view.
TensorView as_heads(const TensorView& v, int heads, Tensor& storage) {
  TensorView c = v;
  if (!c.is_contiguous()) {
    storage = Tensor::copy_of(v, DType::f64);
    c = storage.view();
  }
  const std::int64_t rows = c.shape(0);
  const std::int64_t cols = c.rank() == 2 ? c.shape(1) : 1;
  return TensorView(c.data(), c.dtype(), {heads, 2, rows / heads / 2, cols});
}

int run_diff(const DiffArgs& args) {
  if (!(args.rtol >= 0) || !(args.atol >= 0)) throw Error("--rtol and --atol must be non-negative");
  const io::ModelFile a = io::ModelFile::open(args.a);
  const io::ModelFile b = io::ModelFile::open(args.b);
  auto wanted = [&](const std::string& name) {
    return args.filter.empty() || fnmatch(args.filter.c_str(), name.c_str(), 0) == 0;
  };
  // A llama.cpp export against its Hugging Face original: match through llama.cpp's names.
  const bool a_renamed = needs_gguf_names(a, b);
  const bool b_renamed = needs_gguf_names(b, a);
  std::map<std::string, Side> in_b;
  for (const auto& [name, side] : sides_of(b, b_renamed)) {
    if (wanted(name)) in_b.emplace(name, side);
  }
  if (!args.filter.empty() && in_b.empty()) {
    const auto names_a = sides_of(a, a_renamed);
    if (std::none_of(names_a.begin(), names_a.end(),
                     [&](const auto& entry) { return wanted(entry.first); })) {
      throw Error("--filter '" + args.filter + "' matches none of the " + std::to_string(a.tensors().size()) +
                  " tensor names in " + args.a + " nor the " + std::to_string(b.tensors().size()) + " in " +
                  args.b + " (a glob: * any text, ? one character, [..] a set)");
    }
  }
  std::vector<std::string> missing, extra;
  std::vector<nlohmann::json> shape_changes, dtype_changes;
  std::vector<Changed> compared;
  for (const auto& [name, side_a] : sides_of(a, a_renamed)) {
    if (!wanted(name)) continue;
    const io::NamedTensor& t = *side_a.tensor;
    const auto it = in_b.find(name);
    if (it == in_b.end()) {
      missing.push_back(name);
      continue;
    }
    const Side side_b = it->second;
    const io::NamedTensor& tb = *side_b.tensor;
    in_b.erase(it);
    if (t.dtype_name() != tb.dtype_name()) {
      dtype_changes.push_back(
          {{"name", name}, {"a", std::string(t.dtype_name())}, {"b", std::string(tb.dtype_name())}});
    }
    if (!std::equal(t.shape().begin(), t.shape().end(), tb.shape().begin(), tb.shape().end())) {
      shape_changes.push_back({{"name", name}, {"a", t.shape()}, {"b", tb.shape()}});
      continue;
    }
    // Quantised sides are compared by their decoded values (one tensor in memory at a time);
    // a permuted GGUF projection through a view in Hugging Face row order.
    Tensor storage_a, storage_b, heads_storage;
    bool a_heads = false;
    bool b_heads = false;
    TensorView va = values_of(side_a, storage_a, a_heads);
    TensorView vb = values_of(side_b, storage_b, b_heads);
    if (a_heads != b_heads) {
      if (a_heads) vb = as_heads(vb, side_a.permuted_heads, heads_storage);
      if (b_heads) va = as_heads(va, side_b.permuted_heads, heads_storage);
    }
    Comparison c = compare_tensors(va, vb, args.rtol, args.atol);
    if (c.first_mismatch.size() == 4) {  // [head, half, j, col] back to [row, col]
      const std::int64_t half = va.shape(2);
      c.first_mismatch = {c.first_mismatch[0] * 2 * half + c.first_mismatch[1] * half + c.first_mismatch[2],
                          c.first_mismatch[3]};
      if (t.shape().size() == 1) c.first_mismatch.resize(1);
    }
    compared.push_back({name, c});
  }
  for (const auto& [name, side] : in_b) extra.push_back(name);
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
    out["renamed"] = a_renamed   ? nlohmann::json("a")
                     : b_renamed ? nlohmann::json("b")
                                 : nlohmann::json(nullptr);
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
    std::printf("%s\n", json_text(out).c_str());
  } else {
    const bool colour = use_colour(stdout);
    std::printf("%s\n%s\n", paint("a: " + terminal_safe(args.a), Tone::bold, colour).c_str(),
                paint("b: " + terminal_safe(args.b), Tone::bold, colour).c_str());
    if (a_renamed || b_renamed) {
      std::printf(
          "%s's llama.cpp names matched to Hugging Face names (blk.N.attn_q.weight = "
          "model.layers.N.self_attn.q_proj.weight, ...); query/key rows compared in Hugging Face order\n",
          a_renamed ? "a" : "b");
    }
    const auto as_count = [](std::size_t count) { return static_cast<std::int64_t>(count); };
    std::printf("%s compared, %s not allclose (rtol %g, atol %g); %s only in a, %s only in b, %s, %s\n",
                plural(as_count(compared.size()), "tensor").c_str(),
                format_count(as_count(not_close)).c_str(), args.rtol, args.atol,
                format_count(as_count(missing.size())).c_str(), format_count(as_count(extra.size())).c_str(),
                plural(as_count(shape_changes.size()), "shape change").c_str(),
                plural(as_count(dtype_changes.size()), "dtype change").c_str());
    for (const auto& n : missing)
      std::printf("  %s %s\n", paint("- only in a", Tone::warn, colour).c_str(), terminal_safe(n).c_str());
    for (const auto& n : extra)
      std::printf("  %s %s\n", paint("+ only in b", Tone::warn, colour).c_str(), terminal_safe(n).c_str());
    for (const auto& s : shape_changes) {
      std::printf("  %s %s: %s -> %s\n", paint("~ shape", Tone::bad, colour).c_str(),
                  terminal_safe(s["name"].get<std::string>()).c_str(), s["a"].dump().c_str(),
                  s["b"].dump().c_str());
    }
    if (dtype_changes.size() <= 8) {
      for (const auto& s : dtype_changes) {
        std::printf("  ~ dtype %s: %s -> %s\n", terminal_safe(s["name"].get<std::string>()).c_str(),
                    s["a"].get<std::string>().c_str(), s["b"].get<std::string>().c_str());
      }
    } else {  // a whole-model conversion: one line per kind of change (--json lists each)
      std::map<std::string, int> kinds;
      for (const auto& s : dtype_changes)
        ++kinds[s["a"].get<std::string>() + " -> " + s["b"].get<std::string>()];
      for (const auto& [kind, count] : kinds)
        std::printf("  ~ dtype %s: %s\n", kind.c_str(), plural(count, "tensor").c_str());
    }
    using Align = Table::Align;
    const std::size_t columns = terminal_columns(stdout);
    if (!ranked.empty()) {
      std::printf("\n");
      Table table({{.header = "changed most first", .elidable = true, .minimum = 20},
                   {.header = "allclose"},
                   {.header = "non-finite", .align = Align::right},
                   {.header = "max |a-b|", .align = Align::right},
                   {.header = "max rel", .align = Align::right, .droppable = true},
                   {.header = "cosine", .align = Align::right, .droppable = true},
                   {.header = "rel L2", .align = Align::right, .droppable = true},
                   {.header = "first diff", .droppable = true}});
      for (const Changed* c : ranked) {
        table.add({terminal_safe(c->name), c->c.allclose ? "yes" : "NO",
                   c->c.finiteness_changes ? format_count(c->c.finiteness_changes) : "-",
                   format_number(c->c.max_abs_diff), format_number(c->c.max_rel_diff),
                   format_number(c->c.cosine), format_number(c->c.relative_l2),
                   c->c.first_mismatch.empty() ? "-" : shape_text(c->c.first_mismatch)},
                  c->c.allclose ? Tone::plain : Tone::warn);
      }
      table.print(stdout, columns, colour);
    }
    if (layers.size() > 1) {
      std::printf("\n");
      Table table({{.header = "layer", .align = Align::right}, {.header = "rel L2", .align = Align::right}});
      for (const auto& [layer, sums] : layers) {
        table.add({std::to_string(layer),
                   format_number(sums.second > 0 ? std::sqrt(sums.first / sums.second) : 0.0)});
      }
      table.print(stdout, columns, colour);
    }
  }
  return same ? 0 : 1;
}

}  // namespace

void register_diff(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<DiffArgs>();
  CLI::App* cmd =
      app.add_subcommand("diff", "What changed between two checkpoints (any formats tfdebug reads)");
  cmd->add_option("a", args->a, "The first checkpoint (file, index or folder; any format inspect reads)")
      ->required();
  cmd->add_option("b", args->b, "The second checkpoint")->required();
  cmd->add_option("--rtol", args->rtol, "Relative tolerance of allclose")->capture_default_str();
  cmd->add_option("--atol", args->atol, "Absolute tolerance of allclose")->capture_default_str();
  cmd->add_option("--filter", args->filter, "Only tensors whose name matches this glob");
  cmd->add_flag("--json", args->json, "Machine-readable output (schema in docs/diff.md)");
  cmd->footer("Exit code: 0 same names, shapes and allclose values; 1 differences; 2 bad input.");
  cmd->callback([args, &exit_code] { exit_code = run_diff(*args); });
}

}  // namespace tfdebug::cli
