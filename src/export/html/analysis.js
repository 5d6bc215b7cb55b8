// tfdebug's HTML report: the analyses that tfdebug explain, attack and robust saved beside a run
// (--run-dir) or wrote as a page of their own (--html). Each record is {kind, title, file,
// written_by, result: the command's --json object, images: [{name, png}]}.
"use strict";

// A diverging colour for t in [-1, 1]: blue (negative) through white to vermillion (positive).
TF.diverging = function (t) {
  var a = Math.min(1, Math.abs(t));
  var to = t < 0 ? [0, 114, 178] : [213, 94, 0];
  return [255, 255, 255].map(function (w, k) {
    return Math.round(w + (to[k] - w) * a);
  });
};

// Values of a nested list (an image's [C][H][W]) in order, as numbers (null for none).
TF.flat = function (v) {
  var out = [];
  (function walk(x) {
    if (Array.isArray(x)) x.forEach(walk);
    else out.push(x === null || x === undefined ? null : TF.num(x));
  })(v);
  return out;
};

// Horizontal bars of the largest |value| first: items [{name, value}]. Positive vermillion,
// negative blue, as the attribution maps.
TF.bars = function (title, items, top) {
  var shown = items.filter(function (it) {
    return it.value !== null && Number.isFinite(it.value);
  }).sort(function (a, b) {
    return Math.abs(b.value) - Math.abs(a.value);
  }).slice(0, top);
  var host = TF.el("div", { class: "chart bars", "data-chart": "bars" });
  host.appendChild(TF.el("div", { class: "ctitle", text: title }));
  if (!shown.length) {
    host.appendChild(TF.el("p", { class: "empty", text: "No finite values." }));
    return host;
  }
  var peak = Math.max.apply(null, shown.map(function (it) {
    return Math.abs(it.value);
  })) || 1;
  var row = 20;
  var label = 170;
  var width = 640;
  var half = (width - label - 80) / 2;
  var svg = TF.svg("svg", { viewBox: "0 0 " + width + " " + (row * shown.length + 6), width: "100%", style: "max-width:" + width + "px" });
  var zero = label + half;
  svg.appendChild(TF.svg("line", { x1: zero, x2: zero, y1: 0, y2: row * shown.length + 6, class: "rule-x" }));
  shown.forEach(function (it, i) {
    var y = i * row + 3;
    var w = Math.max(1, half * Math.abs(it.value) / peak);
    var x = it.value < 0 ? zero - w : zero;
    var c = TF.diverging(it.value < 0 ? -0.85 : 0.85);
    svg.appendChild(TF.svg("text", { x: label - 6, y: y + 13, "text-anchor": "end", class: "bar-name" }, it.name));
    svg.appendChild(TF.svg("rect", { x: x, y: y + 2, width: w, height: row - 6, fill: "rgb(" + c.join(",") + ")", "data-name": it.name },
      TF.svg("title", {}, it.name + ": " + TF.fmt(it.value))));
    svg.appendChild(TF.svg("text", { x: it.value < 0 ? x - 4 : x + w + 4, y: y + 13, "text-anchor": it.value < 0 ? "end" : "start", class: "bar-value" }, TF.fmt(it.value)));
  });
  host.appendChild(svg);
  return host;
};

// An [H, W] map on a canvas, scaled up: diverging around 0 (attributions), or grey (an input).
TF.imageMap = function (title, values, h, w, mode) {
  var host = TF.el("figure", { class: "imap" });
  var scale = Math.max(1, Math.floor(224 / Math.max(h, w)));
  var canvas = TF.el("canvas", { width: w, height: h, style: "width:" + w * scale + "px;height:" + h * scale + "px", "data-map": mode });
  var ctx = canvas.getContext("2d");
  var img = ctx.createImageData(w, h);
  var finite = values.filter(function (v) {
    return v !== null && Number.isFinite(v);
  });
  var lo = Math.min.apply(null, finite.concat([0]));
  var hi = Math.max.apply(null, finite.concat([0]));
  var peak = Math.max(Math.abs(lo), Math.abs(hi)) || 1;
  values.forEach(function (v, i) {
    var c;
    if (v === null || !Number.isFinite(v)) c = [236, 238, 242];
    else if (mode === "grey") {
      var g = Math.round(255 * (hi > lo ? (v - lo) / (hi - lo) : 0.5));
      c = [g, g, g];
    } else c = TF.diverging(v / peak);
    img.data[4 * i] = c[0];
    img.data[4 * i + 1] = c[1];
    img.data[4 * i + 2] = c[2];
    img.data[4 * i + 3] = 255;
  });
  ctx.putImageData(img, 0, 0);
  host.appendChild(canvas);
  host.appendChild(TF.el("figcaption", { text: title + (mode === "grey" ? " (" + TF.fmt(lo) + " black to " + TF.fmt(hi) + " white)" : " (blue −" + TF.fmt(peak) + ", white 0, red +" + TF.fmt(peak) + ")") }));
  return host;
};

// An [..., H, W] tensor's values summed over the leading dimensions (an image's channels).
TF.sumToPlane = function (values, shape) {
  var h = shape[shape.length - 2];
  var w = shape[shape.length - 1];
  var plane = new Array(h * w).fill(0);
  values.forEach(function (v, i) {
    var k = i % (h * w);
    if (plane[k] === null) return;
    if (v === null || !Number.isFinite(v)) plane[k] = null;
    else plane[k] += v;
  });
  return plane;
};

TF.analysisNames = function (res, n) {
  var names = [];
  for (var i = 0; i < n; i++) {
    if (res.feature_names && typeof res.feature_names[i] === "string") names.push(res.feature_names[i]);
    else if (res.tokens && res.tokens[i] !== undefined) names.push("#" + i + " token " + res.tokens[i]);
    else names.push("x[" + i + "]");
  }
  return names;
};

TF.explainView = function (res, box, charts) {
  var facts = [];
  var add = function (k, v) {
    if (v !== undefined && v !== null) facts.push([k, typeof v === "number" ? TF.fmt(v) : String(v)]);
  };
  add("method", res.method);
  add("model", res.model);
  if (res.target !== undefined) add("target", res.target + (res.target_chosen ? " (" + res.target_chosen + ")" : ""));
  if (res.layer) add("layer", res.layer);
  add("output", TF.num(res.output));
  add("reference output", TF.num(res.reference_output));
  add("sum of attributions", TF.num(res.sum));
  add("completeness delta", TF.num(res.delta));
  add("model evaluations", res.evaluations);
  if (res.surrogate) add("surrogate", "intercept " + TF.fmt(TF.num(res.surrogate.intercept)) + ", weighted R² " + TF.fmt(TF.num(res.surrogate.r2)));
  if (res.metrics) {
    Object.keys(res.metrics).forEach(function (k) {
      add(k.replace(/_/g, " "), TF.num(res.metrics[k]));
    });
  }
  if (res.evaluation) {
    ["infidelity", "infidelity_normalized", "sensitivity_max", "deletion_auc", "insertion_auc"].forEach(function (k) {
      add(k.replace(/_/g, " "), TF.num(res.evaluation[k]));
    });
  }
  box.appendChild(TF.kv(facts));

  // Counterfactuals (dice, wachter): each one's class and what it changes.
  if (Array.isArray(res.counterfactuals)) {
    var x = res.input || [];
    var names = TF.analysisNames(res, x.length);
    var rows = res.counterfactuals.map(function (c, i) {
      var changed = (c.changed || []).map(function (j) {
        return names[j] + ": " + TF.fmt(TF.num(x[j])) + " → " + TF.fmt(TF.num((c.x || [])[j]));
      }).join(", ");
      return [i + 1, c["class"], c.valid ? "yes" : "no", TF.num(c.distance), changed || "(none)"];
    });
    box.appendChild(TF.el("h4", { text: "counterfactuals (into class " + res.wanted_class + ")" }));
    box.appendChild(TF.table({ columns: [{ label: "#", num: true }, { label: "class", num: true }, { label: "valid" },
      { label: "distance", num: true, fmt: TF.fmt }, { label: "changes", mono: true }], rows: rows }).node);
  }

  if (res.attributions !== undefined) {
    var values = TF.flat(res.attributions);
    var shape = Array.isArray(res.shape) && res.shape.length ? res.shape : [values.length];
    var image = shape.length >= 2 && shape[shape.length - 1] >= 4 && shape[shape.length - 2] >= 4;
    if (image) {
      var h = shape[shape.length - 2];
      var w = shape[shape.length - 1];
      var maps = TF.el("div", { class: "imaps" });
      if (res.input !== undefined) maps.appendChild(TF.imageMap("input", TF.sumToPlane(TF.flat(res.input), shape), h, w, "grey"));
      maps.appendChild(TF.imageMap(res.method + " of output " + res.target, TF.sumToPlane(values, shape), h, w, "diverging"));
      box.appendChild(maps);
    } else {
      var labels = TF.analysisNames(res, values.length);
      box.appendChild(TF.bars("attributions, the largest |value| first (" + Math.min(20, values.length) + " of " + values.length + ")",
        values.map(function (v, i) {
          return { name: labels[i], value: v };
        }), 20));
    }
  }
  if (res.evaluation && Array.isArray(res.evaluation.deletion) && res.evaluation.deletion.length > 1) {
    var steps = res.evaluation.deletion.map(function (_, i) {
      return i / (res.evaluation.deletion.length - 1);
    });
    var curves = TF.lineChart({ id: "deletion", title: "output as the most important features are deleted / inserted", xLabel: "fraction of features", height: 200,
      series: [{ name: "deletion", x: steps, y: res.evaluation.deletion, color: TF.palette[3] },
        { name: "insertion", x: steps, y: res.evaluation.insertion || [], color: TF.palette[0] }] });
    box.appendChild(curves.node);
    charts.push(curves);
  }
};

TF.attackView = function (res, box, charts) {
  var s = res.summary || {};
  box.appendChild(TF.el("div", { class: "summary" },
    TF.stat("attack", String(res.attack || "–") + (res.targeted ? " (targeted)" : "")),
    TF.stat("examples", TF.count(res.examples)),
    TF.stat("success rate", s.success_rate === undefined ? "–" : TF.fmt(100 * TF.num(s.success_rate)) + "%", TF.num(s.success_rate) > 0 ? "bad" : "good"),
    TF.stat("clean accuracy", s.clean_accuracy === undefined ? "–" : TF.fmt(100 * TF.num(s.clean_accuracy)) + "%"),
    TF.stat("robust accuracy", s.robust_accuracy === undefined ? "–" : TF.fmt(100 * TF.num(s.robust_accuracy)) + "%"),
    TF.stat("model queries", TF.count(s.queries))));
  ["l2", "linf", "l0"].forEach(function (k) {
    var d = s[k];
    if (d && d.count) box.appendChild(TF.el("p", { class: "lead", text: k + " of the successful perturbations (" + d.count + "): median " + TF.fmt(TF.num(d.median)) +
      ", quartiles " + TF.fmt(TF.num(d.q25)) + "–" + TF.fmt(TF.num(d.q75)) + ", range " + TF.fmt(TF.num(d.min)) + "–" + TF.fmt(TF.num(d.max)) }));
  });
  if (Array.isArray(res.sweep) && res.sweep.length) {
    var eps = res.sweep.map(function (p) {
      return TF.num(p.eps);
    });
    var sweep = TF.lineChart({ id: "eps_sweep", title: "accuracy under attack as the budget grows", xLabel: "eps", height: 220,
      series: [{ name: "accuracy", x: eps, y: res.sweep.map(function (p) { return p.accuracy; }), color: TF.palette[0] },
        { name: "success rate", x: eps, y: res.sweep.map(function (p) { return p.success_rate; }), color: TF.palette[3] }] });
    box.appendChild(sweep.node);
    charts.push(sweep);
  }
  // A token attack (hotflip: tfdebug attack --model demo): tokens changed and the sequences, not norms.
  if (Array.isArray(res.success) && Array.isArray(res.adversarial) && !Array.isArray(res.l2)) {
    var tokenRows = res.success.map(function (ok, i) {
      var at = function (key) {
        return Array.isArray(res[key]) ? res[key][i] : null;
      };
      var adv = Array.isArray(at("adversarial")) ? at("adversarial").join(" ") : "";
      var where = Array.isArray(at("positions")) && at("positions").length ? " (" + at("positions").join(", ") + ")" : "";
      return [i, at("labels"), at("predicted_before"), at("predicted_after"), ok ? "yes" : "no", TF.num(at("confidence_before")), TF.num(at("confidence_after")),
        TF.num(at("l0")), adv + where];
    });
    box.appendChild(TF.table({ columns: [{ label: "example", num: true }, { label: "label", num: true }, { label: "before", num: true }, { label: "after", num: true },
      { label: "broken" }, { label: "confidence before", num: true, fmt: TF.fmt }, { label: "confidence after", num: true, fmt: TF.fmt },
      { label: "tokens changed", num: true }, { label: "adversarial sequence (changed positions)" }], rows: tokenRows, pageSize: 20 }).node);
    return;
  }
  if (Array.isArray(res.success)) {
    var rows = res.success.map(function (ok, i) {
      var at = function (key) {
        return Array.isArray(res[key]) ? res[key][i] : null;
      };
      return [i, at("labels"), at("predicted_before"), at("predicted_after"), ok ? "yes" : "no", TF.num(at("confidence_before")), TF.num(at("confidence_after")),
        TF.num(at("l2")), TF.num(at("linf"))];
    });
    box.appendChild(TF.table({ columns: [{ label: "example", num: true }, { label: "label", num: true }, { label: "before", num: true }, { label: "after", num: true },
      { label: "broken" }, { label: "confidence before", num: true, fmt: TF.fmt }, { label: "confidence after", num: true, fmt: TF.fmt },
      { label: "l2", num: true, fmt: TF.fmt }, { label: "linf", num: true, fmt: TF.fmt }], rows: rows, pageSize: 20 }).node);
  }
};

TF.robustView = function (res, box, charts) {
  var c = res.certify;
  if (c) {
    box.appendChild(TF.el("h4", { text: "certified robustness (randomized smoothing)" }));
    box.appendChild(TF.el("div", { class: "summary" },
      TF.stat("sigma", TF.fmt(TF.num(c.sigma))),
      TF.stat("certified accuracy", TF.fmt(100 * TF.num(c.certified_accuracy)) + "%"),
      TF.stat("median radius", TF.fmt(TF.num(c.median_radius))),
      TF.stat("abstains", TF.fmt(100 * TF.num(c.abstain_rate)) + "%"),
      TF.stat("samples", TF.count(c.n))));
    var radii = (c.radius || []).map(TF.num);
    var finite = radii.filter(function (r) {
      return r !== null && Number.isFinite(r) && r > 0;
    });
    if (finite.length) {
      var top = Math.max.apply(null, finite);
      var xs = [];
      for (var k = 0; k <= 40; k++) xs.push(top * k / 40);
      var share = xs.map(function (r) {
        return radii.filter(function (v) {
          return v !== null && v >= r && v > 0;
        }).length / radii.length;
      });
      var curve = TF.lineChart({ id: "certified", title: "share of the inputs certified at least this L2 radius", xLabel: "radius", height: 200,
        series: [{ name: "certified", x: xs, y: share, color: TF.palette[2] }] });
      box.appendChild(curve.node);
      charts.push(curve);
    }
  }
  (res.perturbation || []).forEach(function (p) {
    if (!Array.isArray(p.intensities) || p.intensities.length < 2) return;
    box.appendChild(TF.el("h4", { text: p.kind + " noise: score " + TF.fmt(TF.num(p.score)) + " (the mean accuracy over the intensities; clean " + TF.fmt(TF.num(p.clean_accuracy)) + ")" }));
    var chart = TF.lineChart({ id: "perturb_" + p.kind, title: "accuracy and agreement with the clean answers as the noise grows", xLabel: "intensity", height: 200,
      series: [{ name: "accuracy", x: p.intensities, y: p.accuracy, color: TF.palette[0] },
        { name: "agreement", x: p.intensities, y: p.agreement || [], color: TF.palette[1] }] });
    box.appendChild(chart.node);
    charts.push(chart);
    if (Array.isArray(p.failure_modes) && p.failure_modes.length) {
      box.appendChild(TF.el("p", { class: "lead", text: "most common flips: " + p.failure_modes.slice(0, 5).map(function (f) {
        return f.from + " → " + f.to + " (" + f.count + ")";
      }).join(", ") }));
    }
  });
  var wi = res.whatif;
  if (wi && Array.isArray(wi.grids) && wi.grids.length === 1 && Array.isArray(wi.pdp) && wi.pdp.every(function (v) { return !Array.isArray(v); })) {
    var feature = (wi.features || [])[0];
    var name = feature && feature.name !== undefined ? feature.name : String(feature);
    box.appendChild(TF.el("h4", { text: "what if: feature " + name + ", output " + wi.target }));
    var series = [{ name: "partial dependence (mean over the inputs)", x: wi.grids[0], y: wi.pdp, color: TF.palette[0] }];
    if (Array.isArray(wi.ice) && Array.isArray(wi.ice[wi.row])) series.push({ name: "input " + wi.row, x: wi.grids[0], y: wi.ice[wi.row], color: TF.palette[3] });
    var pd = TF.lineChart({ id: "whatif", title: "the output as the feature sweeps its 5th to 95th percentile", xLabel: name, height: 200, series: series });
    box.appendChild(pd.node);
    charts.push(pd);
    (wi.sweeps || []).forEach(function (s) {
      if (Array.isArray(s.flips) && s.flips.length) box.appendChild(TF.el("p", { class: "lead", text: "input " + wi.row + "'s decision flips at " + s.flips.map(function (f) {
        return typeof f === "object" ? TF.fmt(TF.num(f.value)) + " (" + f.from + " → " + f.to + ")" : TF.fmt(TF.num(f));
      }).join(", ") }));
    });
  }
  var e = res.edge_cases;
  if (e && Array.isArray(e.risky)) {
    box.appendChild(TF.el("h4", { text: "risky inputs (" + e.risky.length + ")" }));
    box.appendChild(TF.table({ columns: [{ label: "input", num: true }, { label: "why", mono: true }, { label: "margin", num: true, fmt: TF.fmt },
      { label: "gradient norm", num: true, fmt: TF.fmt }, { label: "Mahalanobis", num: true, fmt: TF.fmt }],
    rows: e.risky.map(function (r) {
      var at = function (key) {
        return Array.isArray(e[key]) ? TF.num(e[key][r.index]) : null;
      };
      return [r.index, (r.reasons || []).join(", "), at("margins"), at("gradient_norms"), at("mahalanobis")];
    }), pageSize: 20 }).node);
  }
  if (Array.isArray(res.recommendations) && res.recommendations.length) {
    box.appendChild(TF.el("h4", { text: "recommendations" }));
    var list = TF.el("ul", { class: "recs" });
    res.recommendations.forEach(function (r) {
      list.appendChild(TF.el("li", {}, TF.el("b", { text: (r.topic || "") + ": " }), String(r.text || "")));
    });
    box.appendChild(list);
  }
};

// The section: one card per analysis, newest last, and the notes about records left out.
TF.analysisSection = function (analyses, notes, charts) {
  var sec = TF.section("analyses", "Analyses", "What tfdebug explain, attack and robust found about the model (saved with --run-dir), newest last.");
  (notes || []).forEach(function (n) {
    sec.node.appendChild(TF.el("div", { class: "note", text: n }));
  });
  analyses.forEach(function (a, i) {
    var box = TF.el("div", { class: "analysis", "data-kind": a.kind, id: "analysis-" + i });
    box.appendChild(TF.el("h3", { text: a.title }));
    box.appendChild(TF.el("div", { class: "meta", text: a.kind + " · " + a.file + (a.written_by ? " · " + a.written_by : "") }));
    var res = a.result || {};
    if (a.kind === "explain") TF.explainView(res, box, charts);
    else if (a.kind === "attack") TF.attackView(res, box, charts);
    else if (a.kind === "robust") TF.robustView(res, box, charts);
    (a.images || []).forEach(function (img) {
      box.appendChild(TF.el("figure", { class: "shot" }, TF.el("img", { src: "data:image/png;base64," + img.png, alt: img.name }),
        TF.el("figcaption", { text: img.name })));
    });
    sec.node.appendChild(box);
  });
  return sec;
};

// A page of analyses only (tfdebug explain/attack/robust --html).
TF.analysisPage = function (d) {
  var charts = [];
  var sec = TF.analysisSection(d.analyses, d.notes, charts);
  TF.page(d.analyses.length === 1 ? d.analyses[0].title : "analyses", [sec]);
  TF.drawAll(charts);
};
