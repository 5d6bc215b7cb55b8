// tfdebug's HTML report: the page of a checkpoint inspection (tfdebug inspect --html).
"use strict";

TF.spark = function (counts) {
  var max = Math.max.apply(null, counts.concat([1]));
  var w = 3;
  var svg = TF.svg("svg", { width: counts.length * w, height: 14, class: "spark" });
  counts.forEach(function (c, i) {
    var h = c > 0 ? Math.max(1, 13 * c / max) : 0;
    svg.appendChild(TF.svg("rect", { x: i * w, y: 14 - h, width: w - 0.6, height: h, fill: "#0072b2" }));
  });
  return svg;
};

TF.checkpointPage = function (d) {
  var charts = [];
  var errors = d.findings.filter(function (f) {
    return f.severity === "error";
  }).length;
  var warnings = d.findings.filter(function (f) {
    return f.severity === "warning";
  }).length;
  var title = d.files.length ? d.files[0][0] + (d.files.length > 1 ? " (+" + (d.files.length - 1) + " files)" : "") : "checkpoint";

  var summary = TF.section("summary", "Checkpoint", null);
  summary.node.appendChild(TF.el("div", { class: "summary" },
    TF.stat("format", d.files.length ? d.files[0][1] : "–"),
    TF.stat("tensors", TF.count(d.tensors) + (d.tensors_in_files !== d.tensors ? " of " + TF.count(d.tensors_in_files) : "")),
    TF.stat("parameters", TF.count(d.parameters)),
    TF.stat("size", TF.bytes(d.bytes)),
    TF.stat("errors", TF.count(errors), errors ? "bad" : "good"),
    TF.stat("warnings", TF.count(warnings), warnings ? "warn" : "")));
  summary.node.appendChild(TF.el("h3", { text: "files" }));
  summary.node.appendChild(TF.kv(d.files.map(function (f) {
    return [f[1], f[0]];
  })));
  if (d.rows.length < d.tensors) {
    summary.node.appendChild(TF.el("div", { class: "note", text: "This page embeds " + TF.count(d.rows.length) + " of " + TF.count(d.tensors) +
      " tensors in its table (every tensor with a finding, then the largest; --html-rows changes it). The module tree and the per-layer charts cover every tensor." }));
  }

  var table = null;
  var tree = null;
  var fsec = TF.section("findings", "Findings", "Sorted by severity, errors first. Click one to open its tensor in the model tree and the table.");
  fsec.node.appendChild(TF.findingList(d.findings, function (f) {
    return f.op || f.module || "(the file)";
  }, function (f) {
    var first = null;
    if (tree && f.op) tree.reveal(f.op);
    if (table && f.tensor !== undefined) first = table.highlight(f.tensor);
    if (first) first.scrollIntoView({ block: "center" });
  }));

  var msec = TF.section("model", "Model", "Modules as a tree with their totals; repeated blocks (layers.0–N with the same tensors) are folded into one row. Click a row to open it.");
  tree = TF.moduleTree(d.tree, [
    { label: "parameters", num: true, get: function (n) { return TF.count(n.p); } },
    { label: "size", num: true, get: function (n) { return TF.bytes(n.b); } },
    { label: "tensors", num: true, width: 70, get: function (n) { return TF.count(n.t); } },
    { label: "NaN/Inf", num: true, width: 70, get: function (n) { return n.x ? TF.count(n.x) : ""; } },
    { label: "findings", finding: true, num: true, width: 120 }], function (node) {
    if (table && node.row >= 0) table.highlight(node.k);
  });
  msec.node.appendChild(tree.node);

  var lsec = null;
  if (d.layers.length) {
    lsec = TF.section("layers", "Per layer", "The parameters of each numbered layer (layers.N, h.N, blk.N): how their scale changes with depth.");
    var xs = d.layers.map(function (l) {
      return l[0];
    });
    var scale = TF.lineChart({ id: "layer_scale", title: "rms and largest |value| per layer (log scale)", xLabel: "layer", integerX: true, logY: true,
      series: [{ name: "rms", x: xs, y: d.layers.map(function (l) { return l[2]; }), color: TF.palette[0] },
        { name: "abs max", x: xs, y: d.layers.map(function (l) { return l[3]; }), color: TF.palette[1] }] });
    var params = TF.lineChart({ id: "layer_params", title: "finite parameters per layer", xLabel: "layer", integerX: true,
      series: [{ name: "parameters", x: xs, y: d.layers.map(function (l) { return l[1]; }), color: TF.palette[2] }] });
    lsec.node.appendChild(TF.el("div", { class: "grid2" }, scale.node, params.node));
    charts.push(scale, params);
  }

  var tsec = TF.section("tensors", "Tensors", "Every tensor's statistics over all its values. Click a header to sort; type to filter by name.");
  table = TF.table({
    key: 15,
    sort: -1,
    filter: "name",
    pageSize: 200,
    rows: d.rows,
    columns: [
      { label: "name", mono: true },
      { label: "dtype" },
      { label: "shape", mono: true, nowrap: true },
      { label: "values", num: true, fmt: TF.count },
      { label: "size", num: true, fmt: TF.bytes },
      { label: "min", num: true, fmt: TF.fmt },
      { label: "max", num: true, fmt: TF.fmt },
      { label: "mean", num: true, fmt: TF.fmt },
      { label: "std", num: true, fmt: TF.fmt },
      { label: "abs max", num: true, fmt: TF.fmt },
      { label: "NaN", num: true, fmt: TF.count, bad: function (v) { return v > 0; } },
      { label: "Inf", num: true, fmt: TF.count, bad: function (v) { return v > 0; } },
      { label: "zeros", num: true, fmt: function (v) { return (100 * v).toFixed(v > 0 && v < 0.001 ? 3 : 1) + "%"; } },
      { label: "finding", num: true, fmt: function (v) { return v === 2 ? "error" : v === 1 ? "warning" : v === 0 ? "info" : ""; }, bad: function (v) { return v === 2; } },
      { label: "histogram", render: function (row) { return TF.spark(row[14]); } }
    ]
  });
  tsec.node.appendChild(table.node);

  var mdsec = TF.section("metadata", "Metadata", "The files' metadata" + (d.metadata_total > d.metadata.length ? " (the first " + d.metadata.length + " of " + d.metadata_total + " entries)" : "") + ".");
  mdsec.node.appendChild(d.metadata.length ? TF.kv(d.metadata) : TF.el("p", { class: "empty", text: "The files hold no metadata." }));

  var graph = d.graph ? TF.graphSection(d.graph) : null;

  TF.page(title, [summary, fsec, msec, lsec, tsec, graph && graph.section, mdsec]);
  TF.drawAll(charts);
};
