// The data of a checkpoint's HTML page (tfdebug/export/html_report.hpp): the per-tensor table
// (bounded), the module tree with its aggregates and repeated blocks folded, per-layer
// summaries, findings and metadata.
#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "html_data.hpp"
#include "tfdebug/core/dtype.hpp"
#include "tfdebug/core/quantized.hpp"
#include "tfdebug/export/html_report.hpp"
#include "tfdebug/io/model_file.hpp"
#include "tfdebug/version.hpp"

namespace tfdebug {
namespace {

using detail::html_number;
using nlohmann::json;

constexpr std::size_t kMaxMetadata = 500;
constexpr std::size_t kMaxMetadataChars = 2000;
constexpr std::size_t kMaxCopies = 2000;

double tensor_bytes(const inspect::TensorReport& t) {
  const double count = double(t.stats.count);
  if (const auto block = parse_block_format(t.dtype)) {
    const BlockFormatInfo& info = block_format_info(*block);
    return std::ceil(count / info.block_elements) * info.block_bytes;
  }
  try {
    return count * double(dtype_size(parse_dtype(t.dtype)));
  } catch (const std::exception&) {
    return 0;  // a dtype tfdebug reads but does not name (it still has its statistics)
  }
}

struct Totals {
  double params = 0, bytes = 0;
  std::int64_t tensors = 0, nonfinite = 0;
  std::int64_t findings[3] = {0, 0, 0};  // by Severity
  void add(const Totals& o) {
    params += o.params;
    bytes += o.bytes;
    tensors += o.tensors;
    nonfinite += o.nonfinite;
    for (int i = 0; i < 3; ++i) findings[i] += o.findings[i];
  }
};

struct Node {
  std::string name;  // the path segment
  Totals totals;
  std::int64_t tensor = -1;  // index in Inspection::tensors when a tensor has this full name
  std::vector<std::unique_ptr<Node>> children;
  std::unordered_map<std::string, Node*> by_name;

  Node* child(const std::string& segment) {
    const auto it = by_name.find(segment);
    if (it != by_name.end()) return it->second;
    children.push_back(std::make_unique<Node>());
    children.back()->name = segment;
    by_name[segment] = children.back().get();
    return children.back().get();
  }
};

bool is_number(const std::string& s) {
  return !s.empty() && s.size() < 10 &&
         std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Note [Folded blocks]: numbered siblings (layers.0, layers.1, ...) whose subtrees hold the same
// tensors (relative names, dtypes, shapes) are one repeated block, as `tfdebug graph` folds its
// repeated blocks. The page shows one node for the run of copies, with totals over all of them,
// the first copy's structure under it, one row per copy (its own totals), and every copy with a
// finding again on its own, unfolded, so that no finding hides inside a fold.
struct OutNode {
  std::string name;
  Totals totals;
  std::int64_t tensor = -1;
  std::int64_t repeat = 0;  // copies, for a folded block
  std::string last;         // the last copy's segment
  json copies;              // [segment, params, nonfinite, errors, warnings] per copy
  std::vector<OutNode> children;
  std::int64_t hidden = 0;  // children not embedded (Note [Tree budget])
};

class TreeBuilder {
 public:
  TreeBuilder(const inspect::Inspection& inspection, const std::vector<Totals>& tensor_totals)
      : inspection_(inspection), tensor_totals_(tensor_totals) {}

  Node build() {
    Node root;
    for (std::size_t i = 0; i < inspection_.tensors.size(); ++i) {
      Node* node = &root;
      const std::string& name = inspection_.tensors[i].name;
      std::size_t start = 0;
      while (true) {
        const std::size_t dot = name.find('.', start);
        node = node->child(name.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
        if (dot == std::string::npos) break;
        start = dot + 1;
      }
      node->tensor = std::int64_t(i);
    }
    sum(root);
    return root;
  }

  OutNode fold(const Node& node) {
    OutNode out{node.name, node.totals, node.tensor, 0, {}, json(), {}, 0};
    std::size_t i = 0;
    while (i < node.children.size()) {
      const Node& first = *node.children[i];
      std::size_t j = i + 1;
      if (is_number(first.name) && !first.children.empty()) {
        const std::string sig = signature(first);
        while (j < node.children.size() && is_number(node.children[j]->name) &&
               std::stoll(node.children[j]->name) == std::stoll(node.children[j - 1]->name) + 1 &&
               signature(*node.children[j]) == sig)
          ++j;
      }
      if (j - i < 2) {
        out.children.push_back(fold(first));
        ++i;
        continue;
      }
      OutNode group = fold(first);
      group.repeat = std::int64_t(j - i);
      group.last = node.children[j - 1]->name;
      group.totals = Totals{};
      group.copies = json::array();
      std::vector<const Node*> with_findings;
      for (std::size_t k = i; k < j; ++k) {
        const Node& copy = *node.children[k];
        group.totals.add(copy.totals);
        if (group.copies.size() < kMaxCopies)
          group.copies.push_back({copy.name, copy.totals.params, copy.totals.nonfinite,
                                  copy.totals.findings[2], copy.totals.findings[1]});
        if (k > i && copy.totals.findings[2] + copy.totals.findings[1] + copy.totals.findings[0] > 0)
          with_findings.push_back(&copy);
      }
      out.children.push_back(std::move(group));
      for (const Node* copy : with_findings) out.children.push_back(fold(*copy));
      i = j;
    }
    return out;
  }

 private:
  void sum(Node& node) {
    if (node.tensor >= 0) node.totals.add(tensor_totals_[std::size_t(node.tensor)]);
    for (auto& c : node.children) {
      sum(*c);
      node.totals.add(c->totals);
    }
  }

  const std::string& signature(const Node& node) {
    const auto it = signatures_.find(&node);
    if (it != signatures_.end()) return it->second;
    std::string sig;
    if (node.tensor >= 0) {
      const inspect::TensorReport& t = inspection_.tensors[std::size_t(node.tensor)];
      sig += t.dtype + "[";
      for (const std::int64_t d : t.shape) sig += std::to_string(d) + ",";
      sig += "]";
    }
    sig += "{";
    for (const auto& c : node.children) sig += c->name + ":" + signature(*c) + ";";
    sig += "}";
    return signatures_[&node] = std::move(sig);
  }

  const inspect::Inspection& inspection_;
  const std::vector<Totals>& tensor_totals_;
  std::unordered_map<const Node*, std::string> signatures_;
};

// Note [Tree budget]: after folding, the tree is embedded level by level down to the deepest
// level at which the node count stays within HtmlReportOptions::max_tree_nodes; a node below the
// cut is counted in its parent's `hidden` (its totals are in the parent's already).
void count_levels(const OutNode& node, std::size_t depth, std::vector<std::size_t>& per_level) {
  if (per_level.size() <= depth) per_level.resize(depth + 1, 0);
  ++per_level[depth];
  for (const OutNode& c : node.children) count_levels(c, depth + 1, per_level);
}

json node_json(const OutNode& node, std::size_t depth, std::size_t max_depth,
               const std::vector<std::int64_t>& row_of, std::size_t& emitted) {
  ++emitted;
  json out = {{"n", node.name},
              {"p", node.totals.params},
              {"b", node.totals.bytes},
              {"t", node.totals.tensors},
              {"x", node.totals.nonfinite},
              {"f", {node.totals.findings[2], node.totals.findings[1], node.totals.findings[0]}}};
  if (node.tensor >= 0) {
    out["k"] = node.tensor;
    out["row"] = row_of[std::size_t(node.tensor)];
  }
  if (node.repeat > 0) {
    out["r"] = node.repeat;
    out["last"] = node.last;
    out["copies"] = node.copies;
  }
  if (!node.children.empty()) {
    if (depth >= max_depth) {
      out["h"] = node.children.size();
    } else {
      json children = json::array();
      for (const OutNode& c : node.children)
        children.push_back(node_json(c, depth + 1, max_depth, row_of, emitted));
      out["c"] = children;
    }
  }
  return out;
}

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string out = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}

}  // namespace

std::string inspection_report_data(const inspect::Inspection& inspection, const HtmlReportOptions& options,
                                   HtmlReportWritten* written) {
  HtmlReportWritten local;
  HtmlReportWritten& w = written != nullptr ? *written : local;
  const std::size_t n = inspection.tensors.size();
  std::unordered_map<std::string, std::size_t> by_name;
  by_name.reserve(n);
  for (std::size_t i = 0; i < n; ++i) by_name.emplace(inspection.tensors[i].name, i);

  std::vector<Totals> totals(n);
  std::vector<int> worst(n, -1);  // the worst severity of a tensor's findings
  for (std::size_t i = 0; i < n; ++i) {
    const inspect::TensorReport& t = inspection.tensors[i];
    totals[i].params = double(t.stats.count);
    totals[i].bytes = tensor_bytes(t);
    totals[i].tensors = 1;
    totals[i].nonfinite = t.stats.nonfinite();
  }
  json findings = json::array();
  Totals unattached;  // findings about the file (pickle code), not a tensor
  for (const Finding& f : inspection.findings) {
    json item = detail::html_finding(f);
    const auto it = by_name.find(f.op);
    if (it != by_name.end()) {
      ++totals[it->second].findings[static_cast<int>(f.severity)];
      worst[it->second] = std::max(worst[it->second], static_cast<int>(f.severity));
      item["tensor"] = it->second;
    } else {
      ++unattached.findings[static_cast<int>(f.severity)];
    }
    findings.push_back(std::move(item));
  }

  // Table rows: tensors with a finding first, then the largest (Note [Tree budget] bounds the tree).
  std::vector<std::size_t> order(n);
  for (std::size_t i = 0; i < n; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (worst[a] != worst[b]) return worst[a] > worst[b];
    return inspection.tensors[a].stats.count > inspection.tensors[b].stats.count;
  });
  order.resize(std::min(n, options.max_tensor_rows));
  std::sort(order.begin(), order.end());  // shown in file order
  std::vector<std::int64_t> row_of(n, -1);
  json rows = json::array();
  for (const std::size_t i : order) {
    const inspect::TensorReport& t = inspection.tensors[i];
    const Stats& s = t.stats;
    row_of[i] = std::int64_t(rows.size());
    rows.push_back({t.name, t.dtype, shape_text(t.shape), double(s.count), totals[i].bytes,
                    html_number(s.min), html_number(s.max), html_number(s.mean), html_number(s.std),
                    html_number(s.abs_max), s.nan, s.pos_inf + s.neg_inf,
                    s.count > 0 ? double(s.zero) / double(s.count) : 0.0, worst[i], t.sparkline.counts, i});
  }

  TreeBuilder builder(inspection, totals);
  const Node root = builder.build();
  OutNode folded = builder.fold(root);
  folded.name = "";
  folded.totals.add(unattached);
  std::vector<std::size_t> per_level;
  count_levels(folded, 0, per_level);
  std::size_t max_depth = 0;
  for (std::size_t used = 0; max_depth < per_level.size(); ++max_depth) {
    if (used + per_level[max_depth] > options.max_tree_nodes && max_depth > 1) break;
    used += per_level[max_depth];
  }
  std::size_t emitted = 0;
  json tree = node_json(folded, 0, max_depth == 0 ? 0 : max_depth - 1, row_of, emitted);

  json files = json::array();
  for (const inspect::ModelFileInfo& f : inspection.files) files.push_back({f.path, f.format});
  json metadata = json::array();
  for (const auto& [key, value] : inspection.metadata) {
    if (metadata.size() >= kMaxMetadata) break;
    metadata.push_back({key, value.size() > kMaxMetadataChars ? value.substr(0, kMaxMetadataChars) + "… (" +
                                                                    std::to_string(value.size()) + " bytes)"
                                                              : value});
  }
  json layers = json::array();
  for (const inspect::LayerSummary& l : inspection.layers)
    layers.push_back({l.layer, l.params, html_number(l.rms), html_number(l.abs_max)});
  double bytes = 0;
  for (const Totals& t : totals) bytes += t.bytes;

  // An ONNX model's graph (the first ONNX file read; shards are not ONNX).
  json graph = nullptr;
  for (const inspect::ModelFileInfo& f : inspection.files) {
    if (f.format != "onnx") continue;
    const io::ModelFile file = io::ModelFile::open(f.path);
    if (const ModelGraph* g = file.graph()) {
      graph =
          detail::html_graph(*g, std::filesystem::path(f.path).filename().string(), options.max_graph_nodes);
      break;
    }
  }

  const json doc = {{"kind", "checkpoint"},
                    {"generator", "tfdebug " TFDEBUG_VERSION_STRING},
                    {"files", files},
                    {"tensors_in_files", inspection.tensors_in_files},
                    {"tensors", n},
                    {"parameters", double(inspection.parameters())},
                    {"bytes", bytes},
                    {"columns",
                     {"name", "dtype", "shape", "values", "bytes", "min", "max", "mean", "std", "abs_max",
                      "nan", "inf", "zero_fraction", "worst", "spark", "index"}},
                    {"rows", rows},
                    {"max_rows", options.max_tensor_rows},
                    {"tree", tree},
                    {"tree_nodes", emitted},
                    {"findings", findings},
                    {"layers", layers},
                    {"metadata", metadata},
                    {"metadata_total", inspection.metadata.size()},
                    {"graph", graph}};
  w.tensor_rows = rows.size();
  w.tree_nodes = emitted;
  return detail::html_dump(doc);
}

}  // namespace tfdebug
