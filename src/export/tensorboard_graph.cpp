// TensorBoard's graph dashboard and embedding projector (tensorboard.hpp: add_graph,
// add_embedding). Field numbers from tensorflow/core/framework/{graph,node_def,attr_value,
// tensor_shape}.proto and tensorboard's projector_config.proto (../shared/reference/formats.md
// section 1): GraphDef node 1, versions 4 {producer 1}; NodeDef name 1, op 2, input 3, attr 5
// (map entries key 1, value 2); AttrValue list 1 {i 3 packed, f 4 packed, shape 7}, s 2, i 3,
// f 4, shape 7; TensorShapeProto dim 2 {size 1}, unknown_rank 3.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "tensorboard_events.hpp"
#include "tfdebug/core/error.hpp"

namespace tfdebug::detail {
namespace {

// "blocks.0.attn.q.weight" -> "blocks.0/attn/q/weight": dotted names as name scopes, a list
// index staying with its list; a leading "/" (ONNX exporter names) is dropped.
std::string scoped_name(const std::string& name) {
  std::string in = name.starts_with("/") ? name.substr(1) : name;
  if (in.find('/') != std::string::npos || in.find("::") != std::string::npos) return in;
  std::string out;
  std::size_t start = 0;
  while (start <= in.size()) {
    std::size_t dot = in.find('.', start);
    if (dot == std::string::npos) dot = in.size();
    const std::string part = in.substr(start, dot - start);
    const bool index = !part.empty() && part.find_first_not_of("0123456789") == std::string::npos;
    if (!out.empty()) out += index ? "." : "/";
    out += part;
    start = dot + 1;
  }
  return out;
}

void shape_proto(ProtoWriter& list, const GraphValue* v) {
  ProtoWriter shape;
  if (v == nullptr || !v->has_shape) {
    shape.integer(3, 1);  // unknown_rank
  } else {
    for (const auto& d : v->dims) {
      ProtoWriter dim;
      const auto* n = std::get_if<std::int64_t>(&d);
      dim.integer(1, n != nullptr ? *n : -1);  // -1: unknown size
      shape.message(2, dim);
    }
  }
  list.message(7, shape);
}

void attr(ProtoWriter& node, const std::string& key, const ProtoWriter& value) {
  ProtoWriter entry;
  entry.bytes(1, key);
  entry.message(2, value);
  node.message(5, entry);
}

void graph_attribute(ProtoWriter& node, const GraphAttribute& a) {
  ProtoWriter value;
  if (const auto* i = std::get_if<std::int64_t>(&a.value)) {
    value.integer(3, *i);
  } else if (const auto* d = std::get_if<double>(&a.value)) {
    value.fixed32(4, static_cast<float>(*d));
  } else if (const auto* s = std::get_if<std::string>(&a.value)) {
    value.bytes(2, *s);
  } else if (const auto* is = std::get_if<std::vector<std::int64_t>>(&a.value)) {
    ProtoWriter list;
    for (const auto x : *is) list.integer(3, x);
    value.message(1, list);
  } else if (const auto* ds = std::get_if<std::vector<double>>(&a.value)) {
    ProtoWriter list;
    for (const auto x : *ds) list.fixed32(4, static_cast<float>(x));
    value.message(1, list);
  }
  attr(node, a.name, value);
}

}  // namespace

std::string graph_def(const ModelGraph& g) {
  std::map<std::string, const GraphValue*> values;
  for (const auto* list : {&g.inputs, &g.initializers, &g.value_info, &g.outputs}) {
    for (const auto& v : *list) values.emplace(v.name, &v);
  }
  // Node names: scoped, unique; a value is "node" (output 0) or "node:k".
  std::set<std::string> names;
  auto unique = [&](std::string name, const std::string& fallback) {
    if (name.empty() || names.contains(name)) name = fallback;
    while (names.contains(name)) name += "_";
    names.insert(name);
    return name;
  };
  std::map<std::string, std::string> source;  // value -> TensorBoard input string
  ProtoWriter graph;
  auto io_node = [&](const GraphValue& v, const char* op) {
    const std::string name = unique(scoped_name(v.name), v.name);
    source[v.name] = name;
    ProtoWriter node;
    node.bytes(1, name);
    node.bytes(2, op);
    ProtoWriter shapes;
    shape_proto(shapes, &v);
    ProtoWriter value;
    value.message(1, shapes);
    attr(node, "_output_shapes", value);
    graph.message(1, node);
  };
  std::set<std::string> weights;
  for (const auto& v : g.initializers) weights.insert(v.name);
  for (const auto& v : g.initializers) io_node(v, "Parameter");
  for (const auto& v : g.inputs) {
    if (!weights.contains(v.name)) io_node(v, "Input");
  }
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    const GraphNode& n = g.nodes[i];
    const std::string name = unique(scoped_name(n.name), n.op_type + "_" + std::to_string(i));
    ProtoWriter node;
    node.bytes(1, name);
    node.bytes(2, n.op_type);
    for (const auto& in : n.inputs) {
      if (const auto it = source.find(in); !in.empty() && it != source.end()) node.bytes(3, it->second);
    }
    ProtoWriter shapes;
    for (std::size_t k = 0; k < n.outputs.size(); ++k) {
      source[n.outputs[k]] = k == 0 ? name : name + ":" + std::to_string(k);
      const auto it = values.find(n.outputs[k]);
      shape_proto(shapes, it == values.end() ? nullptr : it->second);
    }
    ProtoWriter value;
    value.message(1, shapes);
    attr(node, "_output_shapes", value);
    for (const auto& a : n.attributes) graph_attribute(node, a);
    graph.message(1, node);
  }
  ProtoWriter versions;
  versions.integer(1, 1);
  graph.message(4, versions);
  return graph.str();
}

std::string graph_event(double wall_time, const ModelGraph& graph) {
  ProtoWriter e;
  e.fixed64(kEventWallTime, wall_time);
  e.bytes(kEventGraphDef, graph_def(graph));
  return e.str();
}

namespace {

std::string folder_name(std::string_view tag, std::int64_t step) {
  std::string safe;
  for (const char c : tag) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                    c == '-' || c == '_';
    safe += ok ? c : '_';
  }
  if (safe.empty() || safe == "." || safe == "..") safe = "embedding";
  char prefix[32];
  std::snprintf(prefix, sizeof prefix, "%05lld/", static_cast<long long>(step));
  return prefix + safe;
}

std::string tsv_cell(const std::string& label) {
  std::string out;
  for (const char c : label) out += (c == '\t' || c == '\n' || c == '\r') ? ' ' : c;
  return out;
}

std::string pbtxt_string(std::string_view s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

void write_text(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  if (!out || !(out << text)) throw Error(path.string() + ": cannot write");
}

}  // namespace

std::string write_embedding(const std::string& run_dir, std::string_view tag, TensorView matrix,
                            std::span<const std::string> labels, std::int64_t step) {
  if (matrix.rank() != 2) {
    throw Error("add_embedding '" + std::string(tag) + "': expected a 2-D matrix [points, dimensions], got " +
                matrix.describe());
  }
  const std::int64_t rows = matrix.shape(0);
  const std::int64_t cols = matrix.shape(1);
  if (!labels.empty() && static_cast<std::int64_t>(labels.size()) != rows) {
    throw Error("add_embedding '" + std::string(tag) + "': " + std::to_string(labels.size()) +
                " labels for " + std::to_string(rows) + " points");
  }
  const std::string folder = folder_name(tag, step);
  const std::filesystem::path dir = std::filesystem::path(run_dir) / folder;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw Error(dir.string() + ": cannot create: " + ec.message());
  std::string tsv;
  char cell[32];
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t c = 0; c < cols; ++c) {
      std::snprintf(cell, sizeof cell, "%.9g", matrix.at({r, c}));
      if (c > 0) tsv += '\t';
      tsv += cell;
    }
    tsv += '\n';
  }
  write_text(dir / "tensors.tsv", tsv);
  std::string entry = "embeddings {\n  tensor_name: " + pbtxt_string(step == 0 ? std::string(tag) : folder) +
                      "\n  tensor_path: " + pbtxt_string(folder + "/tensors.tsv") + "\n";
  if (!labels.empty()) {
    std::string metadata;
    for (const auto& label : labels) metadata += tsv_cell(label) + "\n";
    write_text(dir / "metadata.tsv", metadata);
    entry += "  metadata_path: " + pbtxt_string(folder + "/metadata.tsv") + "\n";
  }
  entry += "  tensor_shape: " + std::to_string(rows) + "\n  tensor_shape: " + std::to_string(cols) + "\n}\n";
  return entry;
}

void write_projector_config(const std::string& run_dir, const std::vector<std::string>& entries) {
  std::string text;
  for (const auto& e : entries) text += e;
  write_text(std::filesystem::path(run_dir) / "projector_config.pbtxt", text);
}

}  // namespace tfdebug::detail
