// tfdebug's HTML report: the page of a run directory (report.json, metrics.jsonl,
// flight_recorder.json, profile.json).
"use strict";

TF.runPage = function (d) {
  var charts = [];
  // Views that show a finding's evidence: {rank, show(finding) -> the node to scroll to, or null}.
  var targets = [];
  var run = d.run;
  var metrics = d.metrics;
  var findings = d.findings;
  var errors = findings.filter(function (f) {
    return f.severity === "error";
  }).length;
  var warnings = findings.filter(function (f) {
    return f.severity === "warning";
  }).length;

  // Summary.
  var summary = TF.section("summary", "Run", null);
  var live = d.live;
  var status = run.complete ? ["complete", "good"] : ["did not finish", "bad"];
  if (live && !run.complete) status = live.state === "reconnecting" ? ["live: reconnecting", "warn"] : ["live: running", ""];
  summary.node.appendChild(TF.el("div", { class: "summary", id: "run-status", "data-state": live ? live.state || "" : "report" },
    TF.stat("status", status[0], status[1]),
    TF.stat("steps", TF.count(run.steps) + (run.steps ? " (" + run.first_step + "–" + run.last_step + ")" : "")),
    TF.stat("errors", TF.count(errors), errors ? "bad" : "good"),
    TF.stat("warnings", TF.count(warnings), warnings ? "warn" : ""),
    TF.stat("observations", live && !run.complete ? "–" : TF.count(run.observations)),
    TF.stat("modules", metrics ? TF.count(metrics.modules_total) : "–")));
  var notes = [];
  if (live && !run.complete) notes.push("Live: the page follows the run as it goes" + (live.max_steps ? " (the latest " + TF.count(live.max_steps) + " steps)" : "") + ".");
  else if (!run.complete) notes.push("The run did not finish (killed, or still running): this is what its report.json said last.");
  if (run.stopped) notes.push("The run stopped at its first error (stop_on_error).");
  if (metrics && metrics.cut_off) notes.push("metrics.jsonl ends in part of a line (the run was killed while writing it); that part is left out.");
  if (metrics && metrics.module_stride > 1) notes.push("The run has " + TF.count(metrics.lines) + " steps: each point of the loss is a bucket of " + metrics.stride +
    " consecutive steps, of the per-module charts and heatmaps a bucket of " + metrics.module_stride + " (the mean of its finite values; marked non-finite when any step was).");
  if (metrics && metrics.modules.length < metrics.modules_total) notes.push("The heatmaps show " + metrics.modules.length + " of " + metrics.modules_total + " modules (those with findings first).");
  if (run.dropped.findings > 0) notes.push(TF.plural(run.dropped.findings, "finding was", "findings were") + " dropped (RunConfig::max_findings).");
  if (run.hook_errors.length) notes.push("Hook errors: " + run.hook_errors.join("; "));
  notes.forEach(function (n) {
    summary.node.appendChild(TF.el("div", { class: "note", text: n }));
  });

  // Findings.
  var fsec = TF.section("findings", "Findings", "Sorted by severity, errors first. Click one to see its evidence: the step in the charts, the module in the heatmaps, the op in the flight recorder.");
  fsec.node.appendChild(TF.findingList(findings, function (f) {
    var where = "step " + f.step + (f.count > 1 ? " (" + TF.plural(f.count, "step", "steps") + ", last " + f.last_step + ")" : "");
    return where + " · " + f.phase + " · " + (f.module || "(top level)") + (f.op ? " / " + f.op : "");
  }, function (f) {
    // Every view shows its part of the evidence; the page scrolls to the most telling one.
    var best = null;
    targets.forEach(function (t) {
      var n = t.show(f);
      if (n && (!best || t.rank > best.rank)) best = { rank: t.rank, node: n };
    });
    if (best) best.node.scrollIntoView({ block: "center" });
  }));

  // Metrics.
  var msec = null;
  var gsec = null;
  var asec = null;
  // The point (bucket) that holds `step` in a list of bucket start steps.
  var indexIn = function (steps, step) {
    var best = -1;
    for (var i = 0; i < steps.length; i++) if (steps[i] <= step) best = i;
    return best;
  };
  var stepIndex = function (step) {
    return metrics ? indexIn(metrics.steps, step) : -1;
  };
  var moduleStepIndex = function (step) {
    return metrics ? indexIn(metrics.module_steps, step) : -1;
  };
  if (metrics && metrics.steps.length) {
    msec = TF.section("metrics", "Loss and metrics", "The loss per step (NaN marked in red); the steps of error findings are dashed lines.");
    var markers = [];
    findings.forEach(function (f) {
      if (f.severity === "error" && !markers.some(function (m) { return m.x === f.step; })) markers.push({ x: f.step });
    });
    var loss = TF.lineChart({ id: "loss", title: "loss", xLabel: "step", integerX: true, series: [{ name: "loss", x: metrics.steps, y: metrics.loss, color: TF.palette[0] }], markers: markers });
    msec.node.appendChild(loss.node);
    charts.push(loss);
    targets.push({ rank: 1, show: function (f) {
      loss.highlight(metrics.steps[Math.max(0, stepIndex(f.step))]);
      return f.module === "" || f.op === "loss" ? loss.node : null;
    } });
    if (metrics.grad_norm) {
      // The modules with the largest gradient norm: a chart of every module is a tangle.
      var peak = metrics.modules.map(function (name, i) {
        var m = 0;
        metrics.grad_norm[i].forEach(function (v) {
          v = TF.num(v);
          if (v !== null && Number.isFinite(v)) m = Math.max(m, v);
        });
        return [m, i];
      }).filter(function (p) {
        return p[0] > 0;
      }).sort(function (a, b) {
        return b[0] - a[0];
      }).slice(0, 6);
      var gn = !peak.length ? null : TF.lineChart({ id: "grad_norm", title: "gradient norm, the " + peak.length + " largest modules (log scale)", xLabel: "step", integerX: true, logY: true,
        series: peak.map(function (p, k) {
          return { name: metrics.modules[p[1]] || "(top level)", x: metrics.module_steps, y: metrics.grad_norm[p[1]], color: TF.palette[k] };
        }) });
      if (gn) {
        msec.node.appendChild(gn.node);
        charts.push(gn);
      }
    }

    var heat = function (key, title, unit, log, range) {
      if (!metrics[key]) return null;
      if (!metrics[key].some(function (row) { return row.some(function (v) { return v !== null; }); })) return null;
      var h = TF.heatmap({ id: key, title: title, rows: metrics.modules, cols: metrics.module_steps, values: metrics[key], log: log, unit: unit, range: range });
      charts.push(h);
      return h;
    };
    var focusHeat = function (h, f) {
      if (!h || !h.highlight(f.module, moduleStepIndex(f.step))) return null;
      return h.node;
    };
    gsec = TF.section("gradients", "Gradient and update health", "Per module over steps: the gradient norm and the update/weight ratio (healthy near 1e-3), log colour scales.");
    var hg = heat("grad_norm", "gradient norm", "grad norm", true);
    var hu = heat("update_ratio", "update / weight ratio", "update ratio", true);
    [hg, hu].forEach(function (h) {
      if (h) gsec.node.appendChild(h.node);
    });
    if (!hg && !hu) gsec = null;
    targets.push({ rank: 2, show: function (f) {
      if (f.phase === "forward" || !gsec) return null;
      var a = focusHeat(hg, f);
      var b = focusHeat(hu, f);
      return a || b;
    } });
    asec = TF.section("activations", "Activation statistics", "Per module over steps: the largest |output|, the fraction of exact zeros, dead units and NaN/Inf outputs.");
    var ha = heat("act_abs_max", "largest |output|", "abs max", true);
    var hz = heat("act_zero_fraction", "fraction of exact zeros", "zero fraction", false, [0, 1]);
    var hd = heat("act_dead_fraction", "dead units (largest fraction)", "dead fraction", false, [0, 1]);
    var hn = heat("act_nonfinite", "NaN/Inf outputs", "non-finite", false);
    [ha, hz, hd, hn].forEach(function (h) {
      if (h) asec.node.appendChild(h.node);
    });
    if (!ha) asec = null;
    targets.push({ rank: 2, show: function (f) {
      if (f.phase !== "forward" || !asec) return null;
      var n = null;
      [ha, hz, hd, hn].forEach(function (h) {
        var r = focusHeat(h, f);
        if (!n) n = r;
      });
      return n;
    } });
  }

  // The flight recorder.
  var flsec = null;
  if (d.flight) {
    var fl = d.flight;
    flsec = TF.section("flight", "Flight recorder", "The ops of the kept steps around the first error, in the order they ran: which op made the first NaN/Inf, and from what.");
    var strip = TF.el("div", { class: "steps-strip" });
    fl.steps.forEach(function (s) {
      strip.appendChild(TF.el("span", { class: "s" + (s.nonfinite_ops ? " bad" : "") + (s.step === fl.trigger.step ? " trigger" : ""),
        text: "step " + s.step + " · loss " + TF.fmt(TF.num(s.loss)) + " · " + TF.plural(s.ops, "op", "ops") + (s.nonfinite_ops ? " · " + s.nonfinite_ops + " with NaN/Inf" : "") }));
    });
    flsec.node.appendChild(strip);
    flsec.node.appendChild(TF.el("div", { class: "note", text: "Trigger: " + fl.trigger.message }));
    var producerEvidence = (fl.trigger.evidence || []).find(function (e) {
      return e[0] === "producer";
    });
    var fromFinite = producerEvidence && producerEvidence[1] === 1;
    flsec.node.appendChild(TF.el("h3", { text: "step " + fl.trigger.step + ": ops " + (fl.chain.length ? fl.chain[0].index : 0) + "–" + (fl.chain.length ? fl.chain[fl.chain.length - 1].index : 0) + " of " + fl.ops_in_step }));
    var chain = TF.el("div", { class: "chain" });
    var producerNode = null;
    fl.chain.forEach(function (op) {
      var bad = op.nan + op.inf > 0;
      var isProducer = op.index === fl.producer;
      var tag = null;
      if (isProducer) tag = fromFinite ? "made the first NaN/Inf here, from finite inputs" : "first NaN/Inf seen here";
      else if (bad && op.index > fl.producer) tag = "passed it on";
      else if (op.index === fl.producer - 1 && !bad) tag = "ran just before it: finite";
      var node = TF.el("div", { class: "op" + (bad ? " nonfinite" : "") + (isProducer ? " producer" : ""), "data-index": op.index },
        TF.el("div", { class: "idx", text: "#" + op.index }),
        TF.el("div", { class: "what" }, TF.el("span", { text: (op.module || "(top level)") + " / " + op.op }),
          TF.el("span", { class: "phase", text: op.phase + " · " + op.role }), tag ? TF.el("span", { class: "tag", text: tag }) : null),
        TF.el("div", { class: "vals", text: TF.count(op.count) + " values · NaN " + TF.count(op.nan) + " · Inf " + TF.count(op.inf) +
          "\nmin " + TF.fmt(TF.num(op.min)) + " · max " + TF.fmt(TF.num(op.max)) + " · mean " + TF.fmt(TF.num(op.mean)) }));
      node.lastChild.style.whiteSpace = "pre";
      if (isProducer) producerNode = node;
      chain.appendChild(node);
    });
    flsec.node.appendChild(chain);
    targets.push({ rank: 3, show: function (f) {
      if (!producerNode || f.step !== fl.trigger.step || f.module !== fl.trigger.module || f.rule !== fl.trigger.rule) return null;
      producerNode.classList.add("hl");
      return producerNode;
    } });
  }

  // The profile.
  var psec = null;
  if (d.profile) {
    var p = d.profile;
    psec = TF.section("profile", "Profile", "From profile.json: " + TF.plural(p.steps, "step", "steps") + " profiled, " + TF.duration(p.step_ns) + " per step.");
    // The module tree by total time: a node's children are the modules under it.
    var rootNode = { name: "all", path: "", value: 0, children: [] };
    var byPath = { "": rootNode };
    p.modules.slice().sort(function (a, b) {
      return a[0].split(".").length - b[0].split(".").length;
    }).forEach(function (m) {
      if (m[0] === "") {
        rootNode.value = Math.max(rootNode.value, m[2]);
        return;
      }
      var parts = m[0].split(".");
      var parent = rootNode;
      for (var i = parts.length - 1; i > 0; i--) {
        var pp = parts.slice(0, i).join(".");
        if (byPath[pp]) {
          parent = byPath[pp];
          break;
        }
      }
      // Named from its parent: blocks.0 under the whole model, fc1 under blocks.0.mlp.
      var node = { name: parent === rootNode ? m[0] : m[0].slice(parent.path.length + 1), path: m[0], value: m[2], children: [] };
      byPath[m[0]] = node;
      parent.children.push(node);
    });
    var top = rootNode.children.reduce(function (s, c) {
      return s + c.value;
    }, 0);
    rootNode.value = Math.max(rootNode.value, top);
    psec.node.appendChild(TF.el("h3", { text: "time by module (flame graph)" }));
    var flame = TF.flame(rootNode, TF.duration);
    psec.node.appendChild(flame.node);
    charts.push(flame);
    psec.node.appendChild(TF.el("h3", { text: "modules" }));
    psec.node.appendChild(TF.table({
      columns: [{ label: "module", mono: true, fmt: function (v) { return v || "(whole model)"; } }, { label: "self time", num: true, fmt: TF.duration }, { label: "total time", num: true, fmt: TF.duration },
        { label: "self FLOPs", num: true, fmt: TF.count }, { label: "total FLOPs", num: true, fmt: TF.count }, { label: "calls", num: true, fmt: TF.count }],
      rows: p.modules, sort: 2, filter: "module" }).node);
    psec.node.appendChild(TF.el("h3", { text: "ops by self time (top " + p.ops.length + " of " + p.ops_total + ")" }));
    psec.node.appendChild(TF.table({
      columns: [{ label: "op", mono: true }, { label: "module", mono: true }, { label: "phase" }, { label: "calls", num: true, fmt: TF.count },
        { label: "self time", num: true, fmt: TF.duration }, { label: "FLOPs", num: true, fmt: TF.count }, { label: "allocated", num: true, fmt: TF.bytes }],
      rows: p.ops, sort: 4 }).node);
    if (p.memory && p.memory.timeline.length) {
      var t0 = p.memory.timeline[0][0];
      var unit = p.memory.peak_bytes >= 1048576 ? ["MiB", 1048576] : ["KiB", 1024];
      var mem = TF.lineChart({ id: "memory", title: "live memory (" + unit[0] + "); peak " + TF.bytes(p.memory.peak_bytes) + " at " + (p.memory.peak_module || "(top level)") + " / " + p.memory.peak_op, xLabel: "ms",
        series: [{ name: unit[0], x: p.memory.timeline.map(function (q) { return (q[0] - t0) / 1e6; }), y: p.memory.timeline.map(function (q) { return q[1] / unit[1]; }), color: TF.palette[2] }] });
      psec.node.appendChild(mem.node);
      charts.push(mem);
    }
  }

  // The model: the modules the run observed, with their findings and latest values.
  var modsec = null;
  if (metrics && metrics.modules.length) {
    modsec = TF.section("model", "Model", "The modules the run observed (from metrics.jsonl), with their findings and last values.");
    var last = function (key, i) {
      if (!metrics[key]) return null;
      var row = metrics[key][i];
      for (var j = row.length - 1; j >= 0; j--) if (row[j] !== null) return TF.num(row[j]);
      return null;
    };
    var root = { n: "", c: [], f: [0, 0, 0] };
    var index = { "": root };
    metrics.modules.forEach(function (name, i) {
      var parts = name ? name.split(".") : [];
      var at = root;
      var path = "";
      parts.forEach(function (seg) {
        path = path ? path + "." + seg : seg;
        if (!index[path]) {
          index[path] = { n: seg, c: [], f: [0, 0, 0] };
          at.c.push(index[path]);
        }
        at = index[path];
      });
      at.g = last("grad_norm", i);
      at.u = last("update_ratio", i);
      at.a = last("act_abs_max", i);
    });
    findings.forEach(function (f) {
      var s = TF.severityOrder[f.severity];
      var parts = f.module ? f.module.split(".") : [];
      root.f[s]++;
      for (var k = 1; k <= parts.length; k++) {
        var node = index[parts.slice(0, k).join(".")];
        if (node) node.f[s]++;
      }
    });
    var tree = TF.moduleTree(root, [
      { label: "grad norm", num: true, get: function (n) { return n.g === undefined ? "" : TF.fmt(n.g); } },
      { label: "update ratio", num: true, get: function (n) { return n.u === undefined ? "" : TF.fmt(n.u); } },
      { label: "|output| max", num: true, get: function (n) { return n.a === undefined ? "" : TF.fmt(n.a); } },
      { label: "findings", finding: true, num: true, width: 120 }]);
    modsec.node.appendChild(tree.node);
    targets.push({ rank: 0, show: function (f) {
      if (f.module) tree.reveal(f.module);
      return null;
    } });
  }

  // The model graph, when the run directory holds model.onnx (tfdebug demo --out writes it).
  var graph = null;
  if (d.graph) {
    graph = TF.graphSection(d.graph);
    targets.push({ rank: 0, show: function (f) {
      if (f.module) graph.reveal(f.module);
      return null;
    } });
  }

  // Configuration.
  var csec = TF.section("config", "Configuration", "RunConfig::entries() as report.json holds them, and the run's spectral measurements.");
  csec.node.appendChild(TF.kv([["run directory", run.dir], ["written by", "tfdebug " + run.version]]));
  csec.node.appendChild(TF.el("h3", { text: "settings" }));
  csec.node.appendChild(d.config.length ? TF.table({ columns: [{ label: "setting", mono: true }, { label: "value", mono: true }], rows: d.config, filter: "setting", pageSize: 12 }).node
    : TF.el("p", { class: "empty", text: "report.json holds no configuration." }));
  if (d.spectral.length) {
    csec.node.appendChild(TF.el("h3", { text: "spectral norms (latest)" }));
    csec.node.appendChild(TF.table({ columns: [{ label: "module", mono: true }, { label: "parameter", mono: true }, { label: "step", num: true },
      { label: "spectral norm", num: true, fmt: TF.fmt }, { label: "stable rank", num: true, fmt: TF.fmt }], rows: d.spectral }).node);
  }

  // What tfdebug explain, attack and robust saved into this run directory (--run-dir).
  var ansec = d.analyses && (d.analyses.length || d.analysis_notes.length) ? TF.analysisSection(d.analyses, d.analysis_notes, charts) : null;

  TF.page(run.dir, [summary, fsec, msec, gsec, asec, flsec, psec, modsec, graph && graph.section, ansec, csec]);
  TF.drawAll(charts);
};

// Draws `charts` now that they are on the page (they size to their container), and again
// when the window changes size.
// The live page draws itself again and again: one listener, for the charts drawn last.
TF.drawAll = function (charts) {
  charts.forEach(function (c) {
    c.draw();
  });
  var first = !TF.drawnCharts;
  TF.drawnCharts = charts;
  if (!first) return;
  var pending = null;
  window.addEventListener("resize", function () {
    clearTimeout(pending);
    pending = setTimeout(function () {
      TF.drawnCharts.forEach(function (c) {
        c.draw();
      });
    }, 150);
  });
};
