// DOT and JSON renderings of a ModelGraph (graph_render.hpp).
//
// Note [Drawn nodes]
// Each node is drawn as itself, or in the place of its counterpart in the first copy of a
// repeated block (blocks.1's third op is drawn as blocks.0's third op), or inside a collapsed
// module (--depth). Edges are drawn between what their ends are drawn as: an edge inside a
// collapsed module disappears, the same edge drawn twice is drawn once, and an edge from one copy
// of a repeated block to the next becomes a dashed edge back to the first copy's start.
#include "graph_render.hpp"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "safe_text.hpp"

namespace tfdebug::cli {
namespace {

bool is_number(const std::string& s) {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
}

// "blocks.0.attn" -> {"blocks.0", "attn"}: a list index stays with its list.
std::vector<std::string> components(const std::string& module) {
  std::vector<std::string> out;
  if (module.empty()) return out;
  std::size_t start = 0;
  while (start <= module.size()) {
    std::size_t dot = module.find('.', start);
    if (dot == std::string::npos) dot = module.size();
    std::string part = module.substr(start, dot - start);
    if (is_number(part) && !out.empty()) {
      out.back() += '.';
      out.back() += part;
    } else {
      out.push_back(std::move(part));
    }
    start = dot + 1;
  }
  return out;
}

std::string join(const std::vector<std::string>& parts, std::size_t n) {
  std::string s;
  for (std::size_t i = 0; i < n && i < parts.size(); ++i) {
    if (i > 0) s += '.';
    s += parts[i];
  }
  return s;
}

// A DOT string's contents: the name terminal-safe (Note [Terminal-safe text]: the DOT may go to
// a terminal, and Graphviz wants UTF-8), then quotes and backslashes escaped, so a label shows
// a control character as its escape, e.g. \x1b.
std::string escaped(const std::string& s) {
  std::string out;
  for (const char c : terminal_safe(s)) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

// "blocks.3" -> ("blocks", 3).
std::optional<std::pair<std::string, long>> indexed(const std::string& component) {
  const auto dot = component.rfind('.');
  if (dot == std::string::npos || !is_number(component.substr(dot + 1)) || component.size() - dot > 9) {
    return std::nullopt;
  }
  return std::pair{component.substr(0, dot), std::stol(component.substr(dot + 1))};
}

struct Cluster {
  std::vector<std::string> items;  // DOT statements of the nodes drawn here
  std::map<std::string, Cluster> children;
};

struct Repeat {
  long count = 0;
  std::string last;  // the last copy's path
};

class DotBuilder {
 public:
  DotBuilder(const ModelGraph& g, const DotOptions& o) : g_(g), o_(o) {
    for (const auto* list : {&g.inputs, &g.outputs, &g.value_info, &g.initializers}) {
      for (const auto& v : *list) shapes_.emplace(v.name, value_text(v));
    }
    for (const auto& v : g.initializers) weights_.insert(v.name);
    for (std::size_t i = 0; i < g.nodes.size(); ++i) {
      comps_.push_back(components(module_of_node(g.nodes[i])));
      for (const auto& out : g.nodes[i].outputs) producer_[out] = i;
      counterpart_.push_back(i);
    }
    // PyTorch's exporter shares equal weights between blocks through Identity nodes at the top
    // level: their outputs are drawn as the weights they are, and the nodes not at all.
    weight_alias_.assign(g.nodes.size(), false);
    for (std::size_t i = 0; i < g.nodes.size(); ++i) {
      const GraphNode& n = g.nodes[i];
      if (n.op_type == "Identity" && n.domain.empty() && n.inputs.size() == 1 && n.outputs.size() == 1 &&
          weights_.contains(n.inputs[0])) {
        weights_.insert(n.outputs[0]);
        weight_alias_[i] = true;
      }
    }
    copy_.assign(g.nodes.size(), {-1, 0});
    if (o.collapse_repeats) find_repeats();
  }

  std::string dot() {
    std::string s = "digraph \"" + escaped(g_.name.empty() ? "graph" : g_.name) + "\" {\n";
    s += "  rankdir=TB;\n  node [shape=box, style=\"rounded,filled\", fillcolor=\"#eef3fb\", "
         "fontname=\"Helvetica\", fontsize=10];\n  edge [fontname=\"Helvetica\", fontsize=8, "
         "color=\"#555555\"];\n";
    for (const auto& v : g_.inputs) {
      if (weights_.contains(v.name)) continue;
      s += "  \"in:" + escaped(v.name) + "\" [shape=ellipse, fillcolor=\"#dff0d8\", label=\"" +
           escaped(v.name) + "\\n" + escaped(value_text(v)) + "\"];\n";
    }
    for (const auto& v : g_.outputs) {
      s += "  \"out:" + escaped(v.name) + "\" [shape=ellipse, fillcolor=\"#fcf8e3\", label=\"" +
           escaped(v.name) + "\\n" + escaped(value_text(v)) + "\"];\n";
    }
    place_nodes();
    emit_cluster(s, root_, {}, 1);
    emit_edges(s);
    return s + "}\n";
  }

 private:
  // ---- Repeated blocks ------------------------------------------------------------------------

  std::vector<std::size_t> subtree(const std::vector<std::string>& path) const {
    std::vector<std::size_t> nodes;
    for (std::size_t i = 0; i < comps_.size(); ++i) {
      if (comps_[i].size() >= path.size() && std::equal(path.begin(), path.end(), comps_[i].begin())) {
        nodes.push_back(i);
      }
    }
    return nodes;
  }

  // The structure of a module's subgraph, independent of its own name: each node's place below
  // the module, op, output shapes and where each input comes from (a node of the subgraph by
  // position, a weight by its shape, or outside).
  std::string signature(const std::vector<std::string>& path, const std::vector<std::size_t>& nodes) const {
    std::map<std::size_t, std::size_t> position;
    for (std::size_t j = 0; j < nodes.size(); ++j) position[nodes[j]] = j;
    std::string sig;
    for (const std::size_t i : nodes) {
      const GraphNode& n = g_.nodes[i];
      sig +=
          join(std::vector<std::string>(comps_[i].begin() + static_cast<long>(path.size()), comps_[i].end()),
               comps_[i].size()) +
          "|" + n.op_type + "(";
      for (const auto& in : n.inputs) {
        if (const auto p = producer_.find(in); p != producer_.end() && position.contains(p->second)) {
          sig += '#';
          sig += std::to_string(position.at(p->second));
        } else if (weights_.contains(in)) {
          // By shape, not name: exporters share equal initializers between blocks.
          const auto it = shapes_.find(in);
          sig += "w:";
          sig += it == shapes_.end() ? "?" : it->second;
        } else {
          sig += in.empty() ? "-" : "x";
        }
        sig += ",";
      }
      sig += ")->";
      for (const auto& out : n.outputs) {
        const auto it = shapes_.find(out);
        sig += (it == shapes_.end() ? "?" : it->second) + ",";
      }
      sig += ";";
    }
    return sig;
  }

  void find_repeats() {
    // Candidate families: (parent path, base) -> index -> path, shallow first.
    std::map<std::size_t, std::map<std::string, std::map<long, std::vector<std::string>>>> families;
    for (const auto& c : comps_) {
      for (std::size_t depth = 1; depth <= c.size(); ++depth) {
        const auto ix = indexed(c[depth - 1]);
        if (!ix) continue;
        std::vector<std::string> path(c.begin(), c.begin() + static_cast<long>(depth));
        families[depth][join(path, depth - 1) + "|" + ix->first][ix->second] = path;
      }
    }
    for (const auto& [depth, by_base] : families) {
      for (const auto& [key, copies] : by_base) {
        const long count = static_cast<long>(copies.size());
        if (count < 2 || copies.begin()->first != 0 || copies.rbegin()->first != count - 1) continue;
        const auto first = subtree(copies.at(0));
        if (first.empty() || counterpart_[first.front()] != first.front()) continue;  // inside a hidden copy
        const std::string sig = signature(copies.at(0), first);
        std::vector<std::vector<std::size_t>> members = {first};
        bool same = true;
        for (long k = 1; k < count && same; ++k) {
          members.push_back(subtree(copies.at(k)));
          same = members.back().size() == first.size() && signature(copies.at(k), members.back()) == sig;
        }
        if (!same) continue;
        const long group = static_cast<long>(repeats_.size());
        repeats_[join(copies.at(0), depth)] = {count, join(copies.at(count - 1), depth)};
        for (long k = 0; k < count; ++k) {
          for (std::size_t j = 0; j < first.size(); ++j) {
            const std::size_t node = members[static_cast<std::size_t>(k)][j];
            counterpart_[node] = first[j];
            copy_[node] = {group, k};
          }
        }
      }
    }
  }

  std::string repeat_label(const std::string& path) const {
    const auto it = repeats_.find(path);
    if (it == repeats_.end()) return path;
    return path + " … " + it->second.last + "  ×" + std::to_string(it->second.count);
  }

  // ---- Placement (Note [Drawn nodes]) ---------------------------------------------------------

  bool collapsed(std::size_t node) const {
    return o_.depth >= 0 && comps_[node].size() > static_cast<std::size_t>(o_.depth);
  }

  std::string drawn_as(std::size_t node) const {
    const std::size_t c = counterpart_[node];
    if (collapsed(c)) return "\"m:" + escaped(join(comps_[c], static_cast<std::size_t>(o_.depth) + 1)) + "\"";
    return "n" + std::to_string(c);
  }

  Cluster& cluster_of(const std::vector<std::string>& path, std::size_t levels) {
    Cluster* c = &root_;
    for (std::size_t d = 0; d < levels && d < path.size(); ++d) c = &c->children[path[d]];
    return *c;
  }

  void place_nodes() {
    std::map<std::string, std::size_t> module_ops;  // collapsed module -> ops drawn in it
    std::map<std::string, std::size_t> first_node;
    for (std::size_t i = 0; i < g_.nodes.size(); ++i) {
      if (counterpart_[i] != i || weight_alias_[i]) continue;
      if (collapsed(i)) {
        const std::string path = join(comps_[i], static_cast<std::size_t>(o_.depth) + 1);
        if (module_ops[path]++ == 0) first_node[path] = i;
        continue;
      }
      cluster_of(comps_[i], comps_[i].size()).items.push_back(node_statement(i));
    }
    for (const auto& [path, ops] : module_ops) {
      const std::size_t i = first_node[path];
      const std::string label =
          escaped(repeat_label(path)) + "\\n" + std::to_string(ops) + (ops == 1 ? " op" : " ops");
      cluster_of(comps_[i], static_cast<std::size_t>(o_.depth))
          .items.push_back("\"m:" + escaped(path) +
                           "\" [shape=box3d, style=filled, fillcolor=\"#dde6f3\", label=\"" + label +
                           "\", tooltip=\"" + escaped(path) + "\"]");
    }
  }

  std::string node_statement(std::size_t i) const {
    const GraphNode& n = g_.nodes[i];
    std::size_t weights = 0;
    for (const auto& in : n.inputs) weights += weights_.contains(in) ? 1 : 0;
    const auto slash = n.name.rfind('/');
    const std::string short_name = n.name.substr(slash == std::string::npos ? 0 : slash + 1);
    std::string label = escaped(n.op_type);
    if (n.domain != "aten" && !short_name.empty() && short_name != n.op_type)
      label += "\\n" + escaped(short_name);
    if (!n.outputs.empty()) {
      if (const auto it = shapes_.find(n.outputs.front()); it != shapes_.end())
        label += "\\n" + escaped(it->second);
    }
    if (weights > 0) label += "\\n(" + std::to_string(weights) + (weights == 1 ? " weight)" : " weights)");
    return "n" + std::to_string(i) + " [label=\"" + label + "\", tooltip=\"" + escaped(n.name) + "\"]";
  }

  void emit_cluster(std::string& s, const Cluster& c, const std::vector<std::string>& path, int level) const {
    const std::string indent(static_cast<std::size_t>(2 * level), ' ');
    for (const auto& item : c.items) s += indent + item + ";\n";
    for (const auto& [name, child] : c.children) {
      std::vector<std::string> child_path = path;
      child_path.push_back(name);
      const std::string full = join(child_path, child_path.size());
      s += indent + "subgraph \"cluster_" + escaped(full) + "\" {\n" + indent + "  label=\"" +
           escaped(repeat_label(full)) +
           "\"; style=\"rounded\"; color=\"#9aa8bd\"; fontname=\"Helvetica\"; fontsize=11;\n";
      emit_cluster(s, child, child_path, level + 1);
      s += indent + "}\n";
    }
  }

  std::string edge_label(const std::string& value) const {
    const auto it = shapes_.find(value);
    return it == shapes_.end() ? "" : "label=\"" + escaped(it->second) + "\"";
  }

  void emit_edges(std::string& s) const {
    std::set<std::string> drawn;
    auto edge = [&](const std::string& from, const std::string& to, const std::string& value, bool repeat) {
      if (from == to) return;
      std::string attrs = edge_label(value);
      if (repeat) attrs += std::string(attrs.empty() ? "" : ", ") + "style=dashed, constraint=false";
      const std::string line = "  " + from + " -> " + to + (attrs.empty() ? "" : " [" + attrs + "]") + ";\n";
      if (drawn.insert(line).second) s += line;
    };
    for (std::size_t i = 0; i < g_.nodes.size(); ++i) {
      for (const auto& in : g_.nodes[i].inputs) {
        if (in.empty() || weights_.contains(in)) continue;
        if (const auto p = producer_.find(in); p != producer_.end()) {
          const auto& a = copy_[p->second];
          const auto& b = copy_[i];
          const bool repeat = a.first >= 0 && a.first == b.first && a.second != b.second;
          edge(drawn_as(p->second), drawn_as(i), in, repeat);
        } else {
          edge("\"in:" + escaped(in) + "\"", drawn_as(i), in, false);
        }
      }
    }
    for (const auto& v : g_.outputs) {
      if (const auto p = producer_.find(v.name); p != producer_.end()) {
        edge(drawn_as(p->second), "\"out:" + escaped(v.name) + "\"", v.name, false);
      }
    }
  }

  const ModelGraph& g_;
  DotOptions o_;
  std::vector<std::vector<std::string>> comps_;
  std::map<std::string, std::string> shapes_;
  std::set<std::string> weights_;
  std::map<std::string, std::size_t> producer_;
  std::vector<std::size_t> counterpart_;
  std::vector<bool> weight_alias_;
  std::vector<std::pair<long, long>> copy_;  // (repeat group, copy index); group -1: none
  std::map<std::string, Repeat> repeats_;    // first copy's path -> the group
  Cluster root_;
};

nlohmann::json attribute_json(const GraphAttribute& a) {
  return std::visit([](const auto& v) { return nlohmann::json(v); }, a.value);
}

}  // namespace

std::string graph_dot(const ModelGraph& graph, const DotOptions& options) {
  return DotBuilder(graph, options).dot();
}

nlohmann::json graph_json(const ModelGraph& g) {
  std::set<std::string> weights;
  for (const auto& v : g.initializers) weights.insert(v.name);
  std::map<std::string, std::string> shapes;
  for (const auto* list : {&g.inputs, &g.outputs, &g.value_info, &g.initializers}) {
    for (const auto& v : *list) shapes.emplace(v.name, value_text(v));
  }
  std::map<std::string, std::size_t> producer;
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    for (const auto& out : g.nodes[i].outputs) producer[out] = i;
  }
  nlohmann::json j;
  j["name"] = g.name;
  j["producer"] = g.producer_name;
  nlohmann::json opsets = nlohmann::json::object();
  for (const auto& o : g.opsets) opsets[o.domain.empty() ? "ai.onnx" : o.domain] = o.version;
  j["opsets"] = opsets;
  j["nodes"] = nlohmann::json::array();
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    const GraphNode& n = g.nodes[i];
    std::vector<std::string> node_weights;
    for (const auto& in : n.inputs) {
      if (weights.contains(in)) node_weights.push_back(in);
    }
    nlohmann::json node = {{"id", "n" + std::to_string(i)},
                           {"name", n.name},
                           {"op", n.op_type},
                           {"domain", n.domain},
                           {"module", module_of_node(n)},
                           {"inputs", n.inputs},
                           {"outputs", n.outputs},
                           {"weights", node_weights}};
    if (!n.attributes.empty()) {
      nlohmann::json attributes = nlohmann::json::object();
      for (const auto& a : n.attributes) attributes[a.name] = attribute_json(a);
      node["attributes"] = attributes;
    }
    j["nodes"].push_back(node);
  }
  j["edges"] = nlohmann::json::array();
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    for (const auto& in : g.nodes[i].inputs) {
      if (in.empty() || weights.contains(in)) continue;
      const auto p = producer.find(in);
      const auto shape = shapes.find(in);
      j["edges"].push_back(
          {{"from", p != producer.end() ? "n" + std::to_string(p->second) : "in:" + in},
           {"to", "n" + std::to_string(i)},
           {"value", in},
           {"shape", shape != shapes.end() ? nlohmann::json(shape->second) : nlohmann::json()}});
    }
  }
  j["inputs"] = nlohmann::json::array();
  for (const auto& v : g.inputs) {
    if (!weights.contains(v.name)) j["inputs"].push_back({{"name", v.name}, {"shape", value_text(v)}});
  }
  j["outputs"] = nlohmann::json::array();
  for (const auto& v : g.outputs) j["outputs"].push_back({{"name", v.name}, {"shape", value_text(v)}});
  j["weights"] = nlohmann::json::array();
  for (const auto& v : g.initializers) j["weights"].push_back({{"name", v.name}, {"shape", value_text(v)}});
  return j;
}

}  // namespace tfdebug::cli
