// tfdebug's HTML report: the model graph section, on both pages (a run directory's model.onnx,
// an ONNX checkpoint's graph). The ops are grouped by module in the order they run, as a
// collapsible tree: open a module to see its submodules and ops, each op with its output type
// and what it reads (earlier ops by number, weights and graph inputs by name).
"use strict";

// g: html_graph_data.cpp's object. Returns {section, reveal(module)}.
TF.graphSection = function (g) {
  var lead = TF.plural(g.ops, "op", "ops") + " from " + g.source + (g.producer ? " (written by " + g.producer + ")" : "") +
    ", by module in the order they run. Open a module to see its ops: each op's output and the ops, weights and inputs it reads.";
  var sec = TF.section("graph", "Model graph", lead);
  var facts = [["inputs", g.inputs.map(function (v) { return v[0] + " " + v[1]; }).join(", ") || "none"],
    ["outputs", g.outputs.map(function (v) { return v[0] + " " + v[1]; }).join(", ") || "none"],
    ["weights", TF.count(g.weights)]];
  if (g.subgraph_ops) facts.push(["in subgraphs", TF.plural(g.subgraph_ops, "op", "ops") + " (If/Loop/Scan bodies; not listed)"]);
  if (g.shown < g.ops) facts.push(["shown", "the first " + TF.count(g.shown) + " of " + TF.count(g.ops) + " ops (the page's bound; tfdebug graph draws them all)"]);
  sec.node.appendChild(TF.kv(facts));

  var root = { n: "", c: [], ops: 0 };
  var index = { "": root };
  function moduleNode(path) {
    if (index[path]) return index[path];
    var cut = path.lastIndexOf(".");
    var parent = moduleNode(cut < 0 ? "" : path.slice(0, cut));
    var node = { n: cut < 0 ? path : path.slice(cut + 1), c: [], ops: 0 };
    parent.c.push(node);
    index[path] = node;
    return node;
  }
  function opLabel(i) {
    return "#" + i + " " + g.nodes[i][0];
  }
  g.nodes.forEach(function (op, i) {
    var module = op[1];
    var owner = moduleNode(module);
    var reads = op[3].map(function (r) {
      if (typeof r === "number") return opLabel(r);
      // A weight of the op's own module by its short name ("weight"), others whole.
      return module && r.indexOf(module + ".") === 0 ? r.slice(module.length + 1) : r;
    });
    owner.c.push({ n: opLabel(i), leaf: true, out: op[4], reads: reads.join(", ") });
    for (var path = module; ; path = path.slice(0, Math.max(0, path.lastIndexOf(".")))) {
      index[path].ops++;
      if (!path) break;
    }
  });
  var tree = TF.moduleTree(root, [
    { label: "ops", num: true, width: 64, get: function (n) { return n.leaf ? "" : TF.count(n.ops); } },
    { label: "output", mono: true, width: 150, get: function (n) { return n.leaf ? n.out : ""; } },
    { label: "reads", mono: true, width: 420, get: function (n) { return n.leaf ? n.reads : ""; } }]);
  tree.node.querySelector(".headrow div").textContent = "module / op";
  sec.node.appendChild(tree.node);
  return { section: sec, reveal: function (module) { return tree.reveal(module); } };
};
