// The model graph of the HTML report (both pages): a ModelGraph (an ONNX file's, or one traced
// from LibTorch and saved as the run directory's model.onnx) as the page's scripts read it.
#include <map>
#include <set>
#include <string>

#include "html_data.hpp"
#include "tfdebug/core/model_graph.hpp"

namespace tfdebug::detail {

// {"source", "producer", "ops", "shown", "subgraph_ops", "weights", "inputs": [[name, type]],
//  "outputs": [[name, type]], "nodes": [[op, module, name, reads, output type]]}: `reads` in
// the order of the node's inputs, an earlier node by its index, a graph input or weight by name. The first
// `max_nodes` nodes, in the graph's (execution) order.
nlohmann::json html_graph(const ModelGraph& graph, const std::string& source, std::size_t max_nodes) {
  std::map<std::string, std::string> types;
  for (const auto* list : {&graph.inputs, &graph.outputs, &graph.value_info, &graph.initializers}) {
    for (const GraphValue& v : *list) types.emplace(v.name, graph_value_text(v));
  }
  std::map<std::string, std::size_t> producer;
  const std::size_t shown = std::min(max_nodes, graph.nodes.size());
  nlohmann::json nodes = nlohmann::json::array();
  for (std::size_t i = 0; i < shown; ++i) {
    const GraphNode& node = graph.nodes[i];
    nlohmann::json reads = nlohmann::json::array();
    std::set<std::size_t> seen;
    for (const std::string& input : node.inputs) {
      if (input.empty()) continue;  // an omitted optional input
      if (const auto p = producer.find(input); p != producer.end()) {
        if (seen.insert(p->second).second) reads.push_back(p->second);
      } else {
        reads.push_back(input);
      }
    }
    std::string output;
    if (!node.outputs.empty()) {
      const auto t = types.find(node.outputs.front());
      output = t == types.end() ? "" : t->second;
    }
    for (const std::string& out : node.outputs) producer.emplace(out, i);
    std::string op;
    if (!node.domain.empty() && node.op_type.find("::") == std::string::npos)
      op.append(node.domain).append(".");
    op.append(node.op_type);
    nodes.push_back({op, module_of_node(node), node.name, reads, output});
  }
  const auto values = [&](const std::vector<GraphValue>& list) {
    nlohmann::json out = nlohmann::json::array();
    for (const GraphValue& v : list) out.push_back({v.name, graph_value_text(v)});
    return out;
  };
  std::string made_by = graph.producer_name;
  if (!graph.producer_version.empty())
    made_by.append(made_by.empty() ? "" : " ").append(graph.producer_version);
  return {{"source", source},
          {"producer", made_by},
          {"ops", graph.nodes.size()},
          {"shown", shown},
          {"subgraph_ops", graph.subgraph_nodes},
          {"weights", graph.initializers.size()},
          {"inputs", values(graph.inputs)},
          {"outputs", values(graph.outputs)},
          {"nodes", nodes}};
}

}  // namespace tfdebug::detail
