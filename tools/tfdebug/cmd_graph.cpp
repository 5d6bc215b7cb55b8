// tfdebug graph MODEL|--demo -o OUT: a model's computation graph as GraphViz DOT (clusters by
// module, edges labelled with shapes), SVG through Graphviz's dot, JSON, ONNX (for Netron), or
// TensorBoard's graph dashboard and projector (docs/graph.md).
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "commands.hpp"
#include "graph_render.hpp"
#include "json_output.hpp"
#include "safe_text.hpp"
#include "terminal.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/core/model_graph.hpp"
#include "tfdebug/export/onnx_export.hpp"
#include "tfdebug/export/tensorboard.hpp"
#include "tfdebug/io/model_file.hpp"
#ifdef TFDEBUG_HAVE_TORCH
#include "graph_demo.hpp"
#endif

extern char** environ;

namespace tfdebug::cli {
namespace {

struct GraphArgs {
  std::string model;
  bool demo = false;
  std::int64_t demo_steps = 0;
  std::vector<std::string> outputs;
  std::string tensorboard;
  int depth = -1;
  bool expand_repeats = false;
  std::int64_t max_weights_mib = 512;  // .onnx: weight values written, in all
};

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  if (!out || !(out << text)) throw Error(path + ": cannot write");
}

// Runs dot -Tsvg; Graphviz is optional, so its absence is a clear error, not a crash.
void render_svg(const std::string& dot_text, const std::string& svg_path) {
  const std::string dot_path = svg_path + ".dot";
  write_file(dot_path, dot_text);
  std::vector<std::string> argv_strings = {"dot", "-Tsvg", "-o", svg_path, dot_path};
  std::vector<char*> argv;
  argv.reserve(argv_strings.size() + 1);
  for (auto& a : argv_strings) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = ::posix_spawnp(&pid, "dot", nullptr, nullptr, argv.data(), environ);
  int status = 0;
  if (spawned == 0) ::waitpid(pid, &status, 0);
  std::filesystem::remove(dot_path);
  if (spawned != 0) {
    throw Error(svg_path +
                ": SVG needs Graphviz's dot, which is not installed (apt-get install graphviz); "
                "write a .dot file instead");
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw Error(svg_path + ": dot failed to render the graph");
}

// The graph to draw: an ONNX file's, or the demo model traced.
struct Source {
  ModelGraph graph;
  std::vector<float> embedding;  // --demo: the token embedding, for the projector
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::vector<std::string> labels;
  std::string embedding_tag;
  // The weights' values (.onnx initializers): an ONNX file's own tensors, or the demo's.
  std::optional<io::ModelFile> file;
  std::vector<std::pair<std::string, TensorView>> weights;
#ifdef TFDEBUG_HAVE_TORCH
  std::vector<DemoWeight> demo_weights;  // what `weights` views for --demo
#endif
};

Source load(const GraphArgs& args) {
  Source source;
  if (args.demo) {
#ifdef TFDEBUG_HAVE_TORCH
    DemoGraph demo = demo_graph(args.demo_steps);
    source.graph = std::move(demo.graph);
    source.embedding = std::move(demo.token_embedding);
    source.rows = demo.vocab;
    source.cols = demo.d_model;
    source.labels = std::move(demo.token_labels);
    source.embedding_tag = "tok.weight";
    source.demo_weights = std::move(demo.weights);
    for (const DemoWeight& w : source.demo_weights)
      source.weights.emplace_back(w.name, TensorView(w.values.data(), DType::f32, w.shape));
#else
    throw Error("--demo: this tfdebug was built without LibTorch, which the demo model needs");
#endif
    return source;
  }
  source.file = io::ModelFile::open(args.model);
  const ModelGraph* g = source.file->graph();
  if (g == nullptr) {
    throw Error(args.model + ": a " + source.file->format() +
                " file holds weights but no graph; tfdebug graph reads ONNX models (or --demo)");
  }
  source.graph = *g;
  for (const io::NamedTensor& t : source.file->tensors()) {
    if (!t.quantized) source.weights.emplace_back(t.name, t.view);
  }
  return source;
}

void write_output(const std::string& out, const Source& source, const GraphArgs& args,
                  const DotOptions& dot) {
  const ModelGraph& g = source.graph;
  if (out == "-") {
    std::printf("%s", graph_dot(g, dot).c_str());
    return;
  }
  if (out.ends_with(".json")) {
    write_file(out, json_text(graph_json(g)) + "\n");
  } else if (out.ends_with(".svg")) {
    render_svg(graph_dot(g, dot), out);
  } else if (out.ends_with(".dot") || out.ends_with(".gv")) {
    write_file(out, graph_dot(g, dot));
  } else if (out.ends_with(".onnx")) {
    OnnxWriteOptions options;
    options.max_weight_bytes = static_cast<std::uint64_t>(args.max_weights_mib) << 20;
    const std::map<std::string, TensorView> by_name(source.weights.begin(), source.weights.end());
    options.weights = [&](const std::string& name) -> std::optional<TensorView> {
      const auto it = by_name.find(name);
      return it == by_name.end() ? std::nullopt : std::optional<TensorView>(it->second);
    };
    OnnxWriteStats stats;
    write_onnx_model(g, out, options, &stats);
    std::string left_out;
    if (stats.weights_over_cap > 0) {
      left_out = ", " + std::to_string(stats.weights_over_cap) + " as shapes only past --max-weights " +
                 std::to_string(args.max_weights_mib) + " MiB";
    }
    std::fprintf(stderr, "%s: %lld weights with their values (%s)%s\n", terminal_safe(out).c_str(),
                 static_cast<long long>(stats.weights_written),
                 (format_count(stats.weight_bytes) + " bytes").c_str(), left_out.c_str());
  } else {
    throw Error("-o " + out +
                ": the output's extension says the format: .dot, .gv, .svg, .json or .onnx (or - for DOT on "
                "stdout)");
  }
  const auto count = [](std::size_t n, const char* noun) {
    return plural(static_cast<std::int64_t>(n), noun);
  };
  std::fprintf(stderr, "%s: %s, %s, %s\n", terminal_safe(out).c_str(), count(g.nodes.size(), "node").c_str(),
               count(g.inputs.size(), "input").c_str(), count(g.outputs.size(), "output").c_str());
}

int run_graph(const GraphArgs& args) {
  if (args.depth < -1) throw Error("--depth must be 0 or more");
  if (args.demo == !args.model.empty()) throw Error("give either a model file or --demo");
  if (!args.demo && args.demo_steps != 0) throw Error("--demo-steps goes with --demo");
  if (args.demo_steps < 0) throw Error("--demo-steps must be 0 or more");
  if (args.max_weights_mib < 0 || args.max_weights_mib > (std::int64_t{1} << 20))
    throw Error("--max-weights must be a number of MiB from 0 to 1048576");
  // Check every output's extension before the (possibly slow) work.
  for (const auto& out : args.outputs) {
    const bool known = out == "-" || out.ends_with(".json") || out.ends_with(".svg") ||
                       out.ends_with(".dot") || out.ends_with(".gv") || out.ends_with(".onnx");
    if (!known) {
      throw Error(
          "-o " + out +
          ": the output's extension says the format: .dot, .gv, .svg, .json or .onnx (or - for DOT on "
          "stdout)");
    }
  }
  const Source source = load(args);
  DotOptions dot;
  dot.depth = args.depth;
  dot.collapse_repeats = !args.expand_repeats;
  std::vector<std::string> outputs = args.outputs;
  if (outputs.empty() && args.tensorboard.empty()) outputs.emplace_back("-");
  for (const auto& out : outputs) write_output(out, source, args, dot);
  if (!args.tensorboard.empty()) {
    TensorBoardWriter tb(args.tensorboard);
    tb.add_graph(source.graph);
    if (!source.embedding.empty()) {
      const std::array<std::int64_t, 2> shape = {source.rows, source.cols};
      tb.add_embedding(source.embedding_tag, TensorView(source.embedding.data(), DType::f32, shape),
                       source.labels);
    }
    tb.close();
    std::fprintf(stderr, "%s: graph (%s)%s\n", terminal_safe(tb.path()).c_str(),
                 plural(static_cast<std::int64_t>(source.graph.nodes.size()), "node").c_str(),
                 source.embedding.empty() ? "" : " and the token embedding for the projector");
  }
  return 0;
}

}  // namespace

void register_graph(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<GraphArgs>();
  CLI::App* cmd = app.add_subcommand(
      "graph", "A model's computation graph as GraphViz DOT, SVG, JSON, ONNX or TensorBoard");
  cmd->add_option("model", args->model, "An ONNX model (or --demo)");
  cmd->add_flag("--demo", args->demo, "The demo transformer (tfdebug demo), traced through one forward pass");
  cmd->add_option("--demo-steps", args->demo_steps, "With --demo: train this many steps before tracing")
      ->capture_default_str();
  cmd->add_option(
      "-o,--output", args->outputs,
      "Output file, repeatable: .dot, .gv, .svg (through Graphviz), .json or .onnx (for Netron); - "
      "for DOT on stdout (the default)");
  cmd->add_option(
      "--tensorboard", args->tensorboard,
      "Write the graph (and with --demo the token embedding, for the projector) to this TensorBoard "
      "run directory");
  cmd->add_option("--depth", args->depth, "Draw modules nested deeper than N as one node each (DOT, SVG)");
  cmd->add_option("--max-weights", args->max_weights_mib,
                  "MiB of weight values an .onnx output carries (initializers, for Netron); weights past it, "
                  "or all with 0, are written as shapes only")
      ->capture_default_str();
  cmd->add_flag("--expand-repeats", args->expand_repeats,
                "Draw every copy of a repeated block (blocks.0 .. blocks.N-1), not one copy marked xN");
  cmd->callback([args, &exit_code] { exit_code = run_graph(*args); });
}

}  // namespace tfdebug::cli
