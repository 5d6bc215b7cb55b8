// tfdebug graph MODEL -o OUT: a model's computation graph as GraphViz DOT (clusters by module,
// edges labelled with shapes), SVG through Graphviz's dot, or JSON (docs/graph.md).
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "commands.hpp"
#include "nlohmann/json.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/io/model_file.hpp"
#include "tfdebug/io/model_graph.hpp"

extern char** environ;

namespace tfdebug::cli {
namespace {

struct GraphArgs {
  std::string model;
  std::string output = "-";
  int depth = 8;
};

// ONNX TensorProto.DataType ids to tfdebug's dtype names.
const char* onnx_type_name(int id) {
  switch (id) {
    case 1:
      return "f32";
    case 2:
      return "u8";
    case 3:
      return "i8";
    case 4:
      return "u16";
    case 5:
      return "i16";
    case 6:
      return "i32";
    case 7:
      return "i64";
    case 8:
      return "string";
    case 9:
      return "bool";
    case 10:
      return "f16";
    case 11:
      return "f64";
    case 12:
      return "u32";
    case 13:
      return "u64";
    case 16:
      return "bf16";
    default:
      return "?";
  }
}

std::string value_text(const io::GraphValue& v) {
  std::string s = onnx_type_name(v.elem_type);
  if (!v.has_shape) return s;
  s += "[";
  for (std::size_t i = 0; i < v.dims.size(); ++i) {
    if (i) s += ",";
    if (const auto* n = std::get_if<std::int64_t>(&v.dims[i])) {
      s += std::to_string(*n);
    } else if (const auto* p = std::get_if<std::string>(&v.dims[i])) {
      s += *p;
    } else {
      s += "?";
    }
  }
  return s + "]";
}

// "/blocks.0/attn/MatMul" -> {"blocks.0", "attn"}: the scopes PyTorch's exporter writes into
// node names (the last component is the node's own name).
std::vector<std::string> module_path(const std::string& node_name) {
  std::vector<std::string> parts;
  std::size_t start = node_name.starts_with("/") ? 1 : 0;
  for (std::size_t slash = node_name.find('/', start); slash != std::string::npos;
       slash = node_name.find('/', start)) {
    if (slash > start) parts.push_back(node_name.substr(start, slash - start));
    start = slash + 1;
  }
  return parts;
}

std::string escaped(const std::string& s) {
  std::string out;
  for (const char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

struct Cluster {
  std::vector<std::size_t> nodes;
  std::map<std::string, Cluster> children;
};

class GraphWriter {
 public:
  GraphWriter(const io::ModelFile& model, const io::ModelGraph& g, int depth) : g_(g), depth_(depth) {
    for (const auto& list : {&g.inputs, &g.outputs, &g.value_info}) {
      for (const auto& v : *list) shapes_[v.name] = value_text(v);
    }
    for (std::size_t i = 0; i < g.nodes.size(); ++i) {
      for (const auto& out : g.nodes[i].outputs) producer_[out] = i;
    }
    // Weights are the initializers: tensors that no node produces (Constant outputs are edges).
    for (const auto& t : model.tensors()) {
      if (!producer_.contains(t.name)) weights_.insert(t.name);
    }
    for (std::size_t i = 0; i < g.nodes.size(); ++i) {
      Cluster* c = &root_;
      const auto path = module_path(g.nodes[i].name);
      for (std::size_t d = 0; d < path.size() && static_cast<int>(d) < depth_; ++d) c = &c->children[path[d]];
      c->nodes.push_back(i);
    }
  }

  std::string dot() const {
    std::string s = "digraph \"" + escaped(g_.name.empty() ? "graph" : g_.name) + "\" {\n";
    s += "  rankdir=TB;\n  node [shape=box, style=\"rounded,filled\", fillcolor=\"#eef3fb\", "
         "fontname=\"Helvetica\", "
         "fontsize=10];\n  edge [fontname=\"Helvetica\", fontsize=8, color=\"#555555\"];\n";
    for (const auto& v : g_.inputs) {
      if (weights_.contains(v.name)) continue;
      s += "  \"in:" + escaped(v.name) + "\" [shape=ellipse, fillcolor=\"#dff0d8\", label=\"" +
           escaped(v.name) + "\\n" + escaped(value_text(v)) + "\"];\n";
    }
    for (const auto& v : g_.outputs) {
      s += "  \"out:" + escaped(v.name) + "\" [shape=ellipse, fillcolor=\"#fcf8e3\", label=\"" +
           escaped(v.name) + "\\n" + escaped(value_text(v)) + "\"];\n";
    }
    emit_cluster(s, root_, "", 1);
    for (std::size_t i = 0; i < g_.nodes.size(); ++i) {
      for (const auto& in : g_.nodes[i].inputs) {
        if (in.empty() || weights_.contains(in)) continue;
        std::string from;
        if (const auto p = producer_.find(in); p != producer_.end()) {
          from = "n" + std::to_string(p->second);
        } else {
          from = "\"in:" + escaped(in) + "\"";
        }
        s += "  " + from + " -> n" + std::to_string(i) + edge_label(in) + ";\n";
      }
    }
    for (const auto& v : g_.outputs) {
      if (const auto p = producer_.find(v.name); p != producer_.end()) {
        s += "  n" + std::to_string(p->second) + " -> \"out:" + escaped(v.name) + "\"" + edge_label(v.name) +
             ";\n";
      }
    }
    return s + "}\n";
  }

  nlohmann::json json() const {
    nlohmann::json j;
    j["name"] = g_.name;
    j["producer"] = g_.producer_name;
    nlohmann::json opsets = nlohmann::json::object();
    for (const auto& o : g_.opsets) opsets[o.domain.empty() ? "ai.onnx" : o.domain] = o.version;
    j["opsets"] = opsets;
    j["nodes"] = nlohmann::json::array();
    for (std::size_t i = 0; i < g_.nodes.size(); ++i) {
      const io::GraphNode& n = g_.nodes[i];
      std::vector<std::string> weights;
      for (const auto& in : n.inputs) {
        if (weights_.contains(in)) weights.push_back(in);
      }
      std::string module;
      for (const auto& p : module_path(n.name)) module += (module.empty() ? "" : ".") + p;
      j["nodes"].push_back({{"id", "n" + std::to_string(i)},
                            {"name", n.name},
                            {"op", n.op_type},
                            {"domain", n.domain},
                            {"module", module},
                            {"inputs", n.inputs},
                            {"outputs", n.outputs},
                            {"weights", weights}});
    }
    j["edges"] = nlohmann::json::array();
    for (std::size_t i = 0; i < g_.nodes.size(); ++i) {
      for (const auto& in : g_.nodes[i].inputs) {
        if (in.empty() || weights_.contains(in)) continue;
        const auto p = producer_.find(in);
        const auto shape = shapes_.find(in);
        j["edges"].push_back(
            {{"from", p != producer_.end() ? "n" + std::to_string(p->second) : "in:" + in},
             {"to", "n" + std::to_string(i)},
             {"value", in},
             {"shape", shape != shapes_.end() ? nlohmann::json(shape->second) : nlohmann::json()}});
      }
    }
    j["inputs"] = nlohmann::json::array();
    for (const auto& v : g_.inputs) {
      if (!weights_.contains(v.name)) j["inputs"].push_back({{"name", v.name}, {"shape", value_text(v)}});
    }
    j["outputs"] = nlohmann::json::array();
    for (const auto& v : g_.outputs) j["outputs"].push_back({{"name", v.name}, {"shape", value_text(v)}});
    return j;
  }

 private:
  std::string edge_label(const std::string& value) const {
    const auto it = shapes_.find(value);
    return it == shapes_.end() ? "" : " [label=\"" + escaped(it->second) + "\"]";
  }

  void emit_cluster(std::string& s, const Cluster& c, const std::string& path, int level) const {
    const std::string indent(static_cast<std::size_t>(2 * level), ' ');
    for (const std::size_t i : c.nodes) {
      const io::GraphNode& n = g_.nodes[i];
      std::size_t weights = 0;
      for (const auto& in : n.inputs) weights += weights_.contains(in) ? 1 : 0;
      const std::string short_name =
          n.name.substr(n.name.rfind('/') == std::string::npos ? 0 : n.name.rfind('/') + 1);
      std::string label = escaped(n.op_type);
      if (!short_name.empty() && short_name != n.op_type) label += "\\n" + escaped(short_name);
      if (weights > 0) label += "\\n(" + std::to_string(weights) + (weights == 1 ? " weight)" : " weights)");
      s += indent + "n" + std::to_string(i) + " [label=\"" + label + "\", tooltip=\"" + escaped(n.name) +
           "\"];\n";
    }
    for (const auto& [name, child] : c.children) {
      const std::string full = path.empty() ? name : path + "." + name;
      s += indent + "subgraph \"cluster_" + escaped(full) + "\" {\n" + indent + "  label=\"" + escaped(full) +
           "\"; style=\"rounded\"; color=\"#9aa8bd\"; fontname=\"Helvetica\"; fontsize=11;\n";
      emit_cluster(s, child, full, level + 1);
      s += indent + "}\n";
    }
  }

  const io::ModelGraph& g_;
  int depth_;
  Cluster root_;
  std::set<std::string> weights_;
  std::map<std::string, std::string> shapes_;
  std::map<std::string, std::size_t> producer_;
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

void run_graph(const GraphArgs& args) {
  if (args.depth < 0) throw Error("--depth must be 0 or more");
  const io::ModelFile model = io::ModelFile::open(args.model);
  const io::ModelGraph* g = model.graph();
  if (g == nullptr) {
    throw Error(args.model + ": a " + model.format() +
                " file holds weights but no graph; tfdebug graph reads ONNX models");
  }
  const GraphWriter writer(model, *g, args.depth);
  const std::string& out = args.output;
  if (out == "-") {
    std::printf("%s", writer.dot().c_str());
  } else if (out.ends_with(".json")) {
    write_file(out, writer.json().dump(2) + "\n");
  } else if (out.ends_with(".svg")) {
    render_svg(writer.dot(), out);
  } else if (out.ends_with(".dot") || out.ends_with(".gv")) {
    write_file(out, writer.dot());
  } else {
    throw Error(
        "-o " + out +
        ": the output's extension says the format: .dot, .gv, .svg or .json (or - for DOT on stdout)");
  }
  if (out != "-") {
    std::fprintf(stderr, "%s: %zu nodes, %zu inputs, %zu outputs\n", out.c_str(), g->nodes.size(),
                 g->inputs.size(), g->outputs.size());
  }
}

}  // namespace

void register_graph(CLI::App& app) {
  auto args = std::make_shared<GraphArgs>();
  CLI::App* cmd = app.add_subcommand("graph", "A model's computation graph as GraphViz DOT, SVG or JSON");
  cmd->add_option("model", args->model, "An ONNX model")->required();
  cmd->add_option("-o,--output", args->output,
                  "Output file: .dot, .gv, .svg (through Graphviz) or .json; - for DOT")
      ->capture_default_str();
  cmd->add_option("--depth", args->depth, "Nest module clusters this deep (0: no clusters)")
      ->capture_default_str();
  cmd->callback([args] { run_graph(*args); });
}

}  // namespace tfdebug::cli
