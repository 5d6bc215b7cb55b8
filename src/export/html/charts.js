// tfdebug's HTML report: charts drawn as SVG (line charts, the flame graph) and canvas
// (heatmaps), with hover values, zoom and highlights that findings point at.
"use strict";

// About `n` round ticks over [lo, hi] (1, 2, 5 times a power of ten).
TF.niceTicks = function (lo, hi, n) {
  if (!(hi > lo)) return [lo];
  var raw = (hi - lo) / Math.max(1, n);
  var mag = Math.pow(10, Math.floor(Math.log10(raw)));
  var step = [1, 2, 5, 10].map(function (m) {
    return m * mag;
  }).find(function (s) {
    return s >= raw;
  });
  var ticks = [];
  for (var t = Math.ceil(lo / step) * step; t <= hi + step * 1e-9; t += step) ticks.push(Math.abs(t) < step * 1e-9 ? 0 : t);
  return ticks;
};
TF.logTicks = function (lo, hi) {
  // Powers of ten; within less than a decade or two, also 2× and 5× them; within less still,
  // round linear ticks (placed on the log scale).
  var pick = function (mults) {
    var ticks = [];
    for (var e = Math.floor(Math.log10(lo)); e <= Math.ceil(Math.log10(hi)); e++) {
      mults.forEach(function (k) {
        var t = k * Math.pow(10, e);
        if (t >= lo * 0.999 && t <= hi * 1.001) ticks.push(Number(t.toPrecision(6)));
      });
    }
    return ticks;
  };
  var ticks = pick([1]);
  if (ticks.length < 3) ticks = pick([1, 2, 5]);
  if (ticks.length < 3) ticks = TF.niceTicks(lo, hi, 4).filter(function (t) {
    return t > 0;
  });
  return ticks;
};

// Labels for a set of ticks: as many decimals as their spacing needs, so that neighbours differ.
TF.tickFormat = function (ticks) {
  var step = Infinity;
  for (var i = 1; i < ticks.length; i++) step = Math.min(step, Math.abs(ticks[i] - ticks[i - 1]));
  var big = ticks.some(function (t) {
    return Math.abs(t) >= 1e6 || (t !== 0 && Math.abs(t) < 1e-3);
  });
  return function (t) {
    if (t === 0) return "0";
    if (big || !Number.isFinite(step)) return TF.fmt(t);
    var decimals = Math.max(0, Math.min(8, -Math.floor(Math.log10(step) + 1e-9)));
    return t.toFixed(decimals);
  };
};

// A line chart. opts: {title, xLabel, yLabel, logY, integerX, height, series: [{name, x, y, color}],
// markers: [{x, label}]}. Hover: the values at the nearest x; drag: zoom to a range; wheel:
// zoom around the pointer; double-click: back to everything. Non-finite values break the line
// and are marked with a band. Returns {node, highlight(x)}.
TF.lineChart = function (opts) {
  var host = TF.el("div", { class: "chart", "data-chart": opts.id || "" });
  if (opts.title) host.appendChild(TF.el("div", { class: "ctitle", text: opts.title }));
  var width = 0;
  var height = opts.height || 240;
  var m = { l: 62, r: 18, t: 12, b: 34 };
  var svg = TF.svg("svg", { height: height });
  host.appendChild(svg);
  var tip = TF.tip(host);
  var all = opts.series.map(function (s) {
    return { name: s.name, x: s.x, y: s.y.map(TF.num), color: s.color };
  });
  var xs = all.length ? all[0].x : [];
  var full = [xs.length ? xs[0] : 0, xs.length ? xs[xs.length - 1] : 1];
  if (full[1] === full[0]) full = [full[0] - 1, full[1] + 1];
  var view = full.slice();
  var highlightX = null;
  if (all.length > 1) {
    var legend = TF.el("div", { class: "legend" });
    all.forEach(function (s) {
      legend.appendChild(TF.el("span", {}, TF.el("i", { style: "background:" + s.color }), s.name));
    });
    host.appendChild(legend);
  }
  host.appendChild(TF.el("div", { class: "hint", text: "hover for values · drag or scroll to zoom · double-click to reset" }));

  var sx, sy;
  function scales() {
    width = Math.max(320, host.clientWidth || 640);
    svg.setAttribute("width", width);
    svg.setAttribute("viewBox", "0 0 " + width + " " + height);
    var lo = Infinity;
    var hi = -Infinity;
    all.forEach(function (s) {
      for (var i = 0; i < s.x.length; i++) {
        var v = s.y[i];
        if (s.x[i] < view[0] || s.x[i] > view[1] || v === null || !Number.isFinite(v)) continue;
        if (opts.logY && v <= 0) continue;
        lo = Math.min(lo, v);
        hi = Math.max(hi, v);
      }
    });
    if (!Number.isFinite(lo)) {
      lo = opts.logY ? 0.1 : 0;
      hi = opts.logY ? 10 : 1;
    }
    if (opts.logY) {
      var llo = Math.log10(lo);
      var lhi = Math.log10(hi);
      if (lhi - llo < 1e-9) {
        llo -= 0.5;
        lhi += 0.5;
      }
      var pad = (lhi - llo) * 0.05;
      llo -= pad;
      lhi += pad;
      sy = function (v) {
        return m.t + (height - m.t - m.b) * (1 - (Math.log10(v) - llo) / (lhi - llo));
      };
      sy.ticks = TF.logTicks(Math.pow(10, llo), Math.pow(10, lhi));
    } else {
      if (hi - lo < 1e-300) {
        // A constant series: a band of 5% around it (a unit around 0).
        var half = lo === 0 ? 0.5 : Math.abs(lo) * 0.05;
        lo -= half;
        hi += half;
      }
      var p = (hi - lo) * 0.06;
      lo -= p;
      hi += p;
      sy = function (v) {
        return m.t + (height - m.t - m.b) * (1 - (v - lo) / (hi - lo));
      };
      sy.ticks = TF.niceTicks(lo, hi, 5);
    }
    sy.label = TF.tickFormat(sy.ticks);
    sx = function (x) {
      return m.l + (width - m.l - m.r) * (x - view[0]) / (view[1] - view[0]);
    };
    sx.invert = function (px) {
      return view[0] + (px - m.l) / (width - m.l - m.r) * (view[1] - view[0]);
    };
  }

  function render() {
    scales();
    TF.clear(svg);
    var plotH = height - m.t - m.b;
    var grid = TF.svg("g", { class: "grid" });
    var axis = TF.svg("g", { class: "axis" });
    sy.ticks.forEach(function (t) {
      var y = sy(t);
      grid.appendChild(TF.svg("line", { x1: m.l, x2: width - m.r, y1: y, y2: y }));
      axis.appendChild(TF.svg("text", { x: m.l - 6, y: y + 4, "text-anchor": "end", text: sy.label(t) }));
    });
    var xt = TF.niceTicks(view[0], view[1], Math.max(2, Math.floor((width - m.l - m.r) / 90)));
    // Steps and layers are whole numbers: no tick between two of them.
    if (opts.integerX) {
      xt = xt.filter(Number.isInteger);
      if (xt.length < 2) xt = xs.filter(function (x) { return x >= view[0] && x <= view[1]; });
    }
    var xlabel = TF.tickFormat(xt);
    xt.forEach(function (t) {
      var x = sx(t);
      grid.appendChild(TF.svg("line", { x1: x, x2: x, y1: m.t, y2: height - m.b }));
      axis.appendChild(TF.svg("text", { x: x, y: height - m.b + 16, "text-anchor": "middle", text: xlabel(t) }));
    });
    axis.appendChild(TF.svg("line", { x1: m.l, x2: width - m.r, y1: height - m.b, y2: height - m.b }));
    if (opts.xLabel) axis.appendChild(TF.svg("text", { x: width - m.r, y: height - 2, "text-anchor": "end", text: opts.xLabel }));
    if (opts.yLabel) axis.appendChild(TF.svg("text", { x: 4, y: m.t - 2 + 10, text: opts.yLabel, transform: "rotate(-90 10 " + (m.t + plotH / 2) + ") translate(" + (-plotH / 2 + 10) + " 0)" }));
    svg.appendChild(grid);
    svg.appendChild(axis);
    var clipId = "clip" + Math.random().toString(36).slice(2);
    svg.appendChild(TF.svg("clipPath", { id: clipId }, TF.svg("rect", { x: m.l, y: m.t, width: width - m.l - m.r, height: plotH })));
    var body = TF.svg("g", { "clip-path": "url(#" + clipId + ")" });
    svg.appendChild(body);
    // Non-finite values: a band over the step, labelled once.
    var labelled = false;
    all.forEach(function (s) {
      for (var i = 0; i < s.x.length; i++) {
        var v = s.y[i];
        if (v === null || Number.isFinite(v) || s.x[i] < view[0] || s.x[i] > view[1]) continue;
        var next = i + 1 < s.x.length ? s.x[i + 1] : s.x[i] + (i > 0 ? s.x[i] - s.x[i - 1] : 1);
        var x0 = sx(s.x[i]);
        var w = Math.max(2, sx(next) - x0);
        body.appendChild(TF.svg("rect", { class: "nan-gap", x: x0 - w / 2, y: m.t, width: w, height: plotH, "data-x": s.x[i] }));
        if (!labelled) {
          body.appendChild(TF.svg("text", { class: "nan-label", x: x0 + 4, y: m.t + 12, text: (Number.isNaN(v) ? "NaN" : "Inf") + " from step " + s.x[i] }));
          labelled = true;
        }
      }
    });
    (opts.markers || []).forEach(function (mk) {
      if (mk.x < view[0] || mk.x > view[1]) return;
      body.appendChild(TF.svg("line", { class: "marker" + (mk.x === highlightX ? " hl" : ""), x1: sx(mk.x), x2: sx(mk.x), y1: m.t, y2: height - m.b, "data-x": mk.x }));
    });
    if (highlightX !== null && !(opts.markers || []).some(function (mk) { return mk.x === highlightX; }) &&
        highlightX >= view[0] && highlightX <= view[1]) {
      body.appendChild(TF.svg("line", { class: "marker hl", x1: sx(highlightX), x2: sx(highlightX), y1: m.t, y2: height - m.b, "data-x": highlightX }));
    }
    all.forEach(function (s) {
      var d = "";
      var pen = false;
      var visible = 0;
      for (var i = 0; i < s.x.length; i++) {
        var v = s.y[i];
        var ok = v !== null && Number.isFinite(v) && !(opts.logY && v <= 0);
        if (!ok) {
          pen = false;
          continue;
        }
        if (s.x[i] >= view[0] && s.x[i] <= view[1]) visible++;
        d += (pen ? "L" : "M") + sx(s.x[i]).toFixed(1) + " " + sy(v).toFixed(1);
        pen = true;
      }
      body.appendChild(TF.svg("path", { class: "series", d: d, stroke: s.color }));
      if (visible <= 120) {
        for (var j = 0; j < s.x.length; j++) {
          var w = s.y[j];
          if (w === null || !Number.isFinite(w) || (opts.logY && w <= 0) || s.x[j] < view[0] || s.x[j] > view[1]) continue;
          body.appendChild(TF.svg("circle", { class: "pt", cx: sx(s.x[j]), cy: sy(w), r: 2.6, fill: s.color, "data-x": s.x[j], "data-series": s.name }));
        }
      }
    });
    var rule = TF.svg("line", { class: "rule-x", y1: m.t, y2: height - m.b, visibility: "hidden" });
    var sel = TF.svg("rect", { class: "sel", y: m.t, height: plotH, visibility: "hidden" });
    svg.appendChild(rule);
    svg.appendChild(sel);
    var overlay = TF.svg("rect", { x: m.l, y: m.t, width: width - m.l - m.r, height: plotH, fill: "transparent", class: "overlay" });
    svg.appendChild(overlay);
    var dragFrom = null;
    function nearest(px) {
      var x = sx.invert(px);
      var best = -1;
      for (var i = 0; i < xs.length; i++) {
        if (xs[i] < view[0] || xs[i] > view[1]) continue;
        if (best < 0 || Math.abs(xs[i] - x) < Math.abs(xs[best] - x)) best = i;
      }
      return best;
    }
    function local(ev) {
      var r = svg.getBoundingClientRect();
      return [ev.clientX - r.left, ev.clientY - r.top];
    }
    overlay.addEventListener("mousemove", function (ev) {
      var p = local(ev);
      if (dragFrom !== null) {
        sel.setAttribute("x", Math.min(dragFrom, p[0]));
        sel.setAttribute("width", Math.abs(p[0] - dragFrom));
        sel.setAttribute("visibility", "visible");
      }
      var i = nearest(p[0]);
      if (i < 0) return;
      rule.setAttribute("x1", sx(xs[i]));
      rule.setAttribute("x2", sx(xs[i]));
      rule.setAttribute("visibility", "visible");
      var lines = [(opts.xLabel || "x") + " " + xs[i]];
      all.forEach(function (s) {
        lines.push(s.name + " " + TF.fmt(s.y[i]));
      });
      tip.show(lines.join("\n"), sx(xs[i]), p[1] + (opts.title ? 20 : 0));
    });
    overlay.addEventListener("mouseleave", function () {
      rule.setAttribute("visibility", "hidden");
      tip.hide();
    });
    overlay.addEventListener("mousedown", function (ev) {
      dragFrom = local(ev)[0];
      ev.preventDefault();
    });
    overlay.addEventListener("mouseup", function (ev) {
      var to = local(ev)[0];
      var from = dragFrom;
      dragFrom = null;
      sel.setAttribute("visibility", "hidden");
      if (from === null || Math.abs(to - from) < 5) return;
      var a = sx.invert(Math.min(from, to));
      var b = sx.invert(Math.max(from, to));
      if (b - a > 0) {
        view = [a, b];
        render();
      }
    });
    overlay.addEventListener("wheel", function (ev) {
      ev.preventDefault();
      var at = sx.invert(local(ev)[0]);
      var k = ev.deltaY > 0 ? 1.25 : 0.8;
      var a = at - (at - view[0]) * k;
      var b = at + (view[1] - at) * k;
      view = [Math.max(full[0], a), Math.min(full[1], b)];
      if (view[1] - view[0] < 1e-9) view = full.slice();
      render();
    }, { passive: false });
    overlay.addEventListener("dblclick", function () {
      view = full.slice();
      render();
    });
  }
  var drawn = false;
  function draw() {
    if (host.isConnected) {
      drawn = true;
      render();
    }
  }
  return {
    node: host,
    draw: draw,
    highlight: function (x) {
      highlightX = x;
      if (x < view[0] || x > view[1]) view = full.slice();
      render();
    },
    get drawn() {
      return drawn;
    }
  };
};

// A heatmap of rows (modules) × columns (steps) on a canvas, with a colour bar. opts: {title,
// rows, cols, values (rows × cols, writer numbers), log, unit}. Hover: module, step and value.
// highlight(row, col) outlines a cell and its row. Returns {node, draw, highlight}.
TF.heatmap = function (opts) {
  var host = TF.el("div", { class: "heat", "data-heatmap": opts.id || "" });
  if (opts.title) host.appendChild(TF.el("div", { class: "ctitle", text: opts.title }));
  var holder = TF.el("div", { style: "position:relative" });
  host.appendChild(holder);
  var canvas = TF.el("canvas");
  var overlay = TF.svg("svg", { class: "overlay" });
  holder.appendChild(canvas);
  holder.appendChild(overlay);
  var tip = TF.tip(holder);
  var bar = TF.el("div", { class: "colorbar" });
  host.appendChild(bar);
  // Rows without a single value (a module with activations but no gradient) are left out.
  var rowNames = [];
  var values = [];
  opts.values.forEach(function (row, r) {
    var v = row.map(TF.num);
    if (v.some(function (x) { return x !== null; })) {
      rowNames.push(opts.rows[r]);
      values.push(v);
    }
  });
  opts = Object.assign({}, opts, { rows: rowNames });
  var lo = Infinity;
  var hi = -Infinity;
  values.forEach(function (row) {
    row.forEach(function (v) {
      if (v === null || !Number.isFinite(v) || (opts.log && v <= 0)) return;
      lo = Math.min(lo, v);
      hi = Math.max(hi, v);
    });
  });
  if (!Number.isFinite(lo)) {
    lo = 0;
    hi = 1;
  }
  if (opts.range) {
    lo = opts.range[0];
    hi = opts.range[1];
  }
  function t(v) {
    if (opts.log) {
      var a = Math.log10(Math.max(v, lo));
      var b = Math.log10(hi);
      var c = Math.log10(lo);
      return b > c ? (a - c) / (b - c) : 0.5;
    }
    return hi > lo ? (v - lo) / (hi - lo) : 0.5;
  }
  var labelW = 0;
  var cellH = opts.rows.length > 40 ? 8 : 18;
  var geometry = null;
  var hl = null;
  function render() {
    var width = Math.max(320, host.clientWidth || 640);
    var charW = cellH > 10 ? 7.3 : 5.5;
    labelW = Math.min(280, Math.max(80, 14 + charW * Math.max.apply(null, opts.rows.map(function (r) {
      return (r || "(top level)").length;
    }).concat([4]))));
    var plotW = width - labelW - 10;
    var cellW = plotW / Math.max(1, opts.cols.length);
    var height = cellH * opts.rows.length + 20;
    var ratio = window.devicePixelRatio || 1;
    canvas.width = Math.round(width * ratio);
    canvas.height = Math.round(height * ratio);
    canvas.style.width = width + "px";
    canvas.style.height = height + "px";
    var g = canvas.getContext("2d");
    g.setTransform(ratio, 0, 0, ratio, 0, 0);
    g.fillStyle = "#fff";
    g.fillRect(0, 0, width, height);
    g.font = (cellH > 10 ? 12 : 9) + "px ui-monospace, DejaVu Sans Mono, monospace";
    g.textBaseline = "middle";
    g.textAlign = "right";
    for (var r = 0; r < opts.rows.length; r++) {
      var label = opts.rows[r] || "(top level)";
      var max = Math.floor((labelW - 10) / charW);
      if (label.length > max) label = "…" + label.slice(label.length - max + 1);
      g.fillStyle = "#3b4352";
      if (cellH > 6) g.fillText(label, labelW - 6, r * cellH + cellH / 2);
      for (var c = 0; c < opts.cols.length; c++) {
        var v = values[r][c];
        if (v === null || v === undefined) g.fillStyle = "#eceef2";
        else if (!Number.isFinite(v)) g.fillStyle = "#d55e00";
        else {
          var rgb = TF.colormap(t(v));
          g.fillStyle = "rgb(" + rgb[0] + "," + rgb[1] + "," + rgb[2] + ")";
        }
        g.fillRect(labelW + c * cellW, r * cellH, Math.ceil(cellW), cellH - (cellH > 10 ? 1 : 0));
      }
    }
    g.textAlign = "center";
    g.fillStyle = "#5b6475";
    g.font = "11px system-ui, sans-serif";
    var ticks = TF.niceTicks(opts.cols[0], opts.cols[opts.cols.length - 1], Math.max(2, Math.floor(plotW / 90)));
    ticks.forEach(function (step) {
      var idx = opts.cols.findIndex(function (s) {
        return s >= step;
      });
      if (idx >= 0) g.fillText(String(opts.cols[idx]), labelW + (idx + 0.5) * cellW, opts.rows.length * cellH + 11);
    });
    overlay.setAttribute("width", width);
    overlay.setAttribute("height", height);
    geometry = { labelW: labelW, cellW: cellW, width: width, height: height };
    drawHighlight();
    // The colour bar.
    TF.clear(bar);
    var cb = TF.el("canvas", { width: 160, height: 10 });
    var cg = cb.getContext("2d");
    for (var i = 0; i < 160; i++) {
      var rgb2 = TF.colormap(i / 159);
      cg.fillStyle = "rgb(" + rgb2[0] + "," + rgb2[1] + "," + rgb2[2] + ")";
      cg.fillRect(i, 0, 1, 10);
    }
    bar.appendChild(TF.el("span", { class: "lo", text: TF.fmt(lo) }));
    bar.appendChild(cb);
    bar.appendChild(TF.el("span", { class: "hi", text: TF.fmt(hi) + (opts.log ? " (log scale)" : "") }));
    bar.appendChild(TF.el("span", { class: "nf" }));
    bar.appendChild(TF.el("span", { text: "NaN/Inf" }));
    bar.appendChild(TF.el("span", { class: "na" }));
    bar.appendChild(TF.el("span", { text: "no value" }));
  }
  function drawHighlight() {
    TF.clear(overlay);
    if (!hl || !geometry) return;
    var y = hl.row * cellH;
    overlay.appendChild(TF.svg("rect", { class: "hl-row", x: 0.5, y: y + 0.5, width: geometry.labelW + geometry.cellW * opts.cols.length - 1, height: cellH - 1 }));
    if (hl.col >= 0)
      overlay.appendChild(TF.svg("rect", { class: "hl", x: geometry.labelW + hl.col * geometry.cellW - 1, y: y - 1, width: Math.max(4, geometry.cellW + 2), height: cellH + 1, "data-module": opts.rows[hl.row], "data-step": opts.cols[hl.col] }));
  }
  canvas.addEventListener("mousemove", function (ev) {
    if (!geometry) return;
    var rect = canvas.getBoundingClientRect();
    var x = ev.clientX - rect.left;
    var y = ev.clientY - rect.top;
    var r = Math.floor(y / cellH);
    var c = Math.floor((x - geometry.labelW) / geometry.cellW);
    if (r < 0 || r >= opts.rows.length || c < 0 || c >= opts.cols.length) {
      tip.hide();
      return;
    }
    tip.show((opts.rows[r] || "(top level)") + "\nstep " + opts.cols[c] + "\n" + (opts.unit || "value") + " " + TF.fmt(values[r][c]), x, y);
  });
  canvas.addEventListener("mouseleave", function () {
    tip.hide();
  });
  return {
    node: host,
    draw: render,
    // Outlines `module`'s row and its cell at column `col`; false when the map has no such row.
    highlight: function (module, col) {
      var row = opts.rows.indexOf(module);
      if (row < 0) return false;
      hl = { row: row, col: col };
      drawHighlight();
      return true;
    },
    rows: rowNames
  };
};

// An icicle flame graph of a tree {name, value, self, children}: one row per depth, width by
// value; labels only where they fit. Hover: the name, its time and share.
TF.flame = function (root, format) {
  var host = TF.el("div", { class: "flame" });
  var svg = TF.svg("svg", {});
  host.appendChild(svg);
  var tip = TF.tip(host);
  var rowH = 20;
  function depth(n) {
    return 1 + (n.children || []).reduce(function (d, c) {
      return Math.max(d, depth(c));
    }, 0);
  }
  var rows = depth(root);
  function render() {
    var width = Math.max(320, host.clientWidth || 640);
    TF.clear(svg);
    svg.setAttribute("width", width);
    svg.setAttribute("height", rows * rowH);
    var colors = ["#f3c27a", "#eea95a", "#e69f00", "#f0b86b", "#e8a33c"];
    function place(n, x, w, d, i) {
      if (w < 0.5) return;
      var rect = TF.svg("rect", { x: x, y: d * rowH, width: Math.max(0.5, w - 0.5), height: rowH - 1, fill: d === 0 ? "#cfd5e1" : colors[(d + i) % colors.length], "data-name": n.path || n.name });
      rect.addEventListener("mousemove", function (ev) {
        var r = svg.getBoundingClientRect();
        tip.show((n.path || n.name) + "\n" + format(n.value) + " (" + (100 * n.value / root.value).toFixed(1) + "%)", ev.clientX - r.left, ev.clientY - r.top);
      });
      rect.addEventListener("mouseleave", function () {
        tip.hide();
      });
      svg.appendChild(rect);
      var chars = Math.floor((w - 8) / 6.6);
      if (chars >= 3) {
        var label = n.name.length > chars ? n.name.slice(0, chars - 1) + "…" : n.name;
        svg.appendChild(TF.svg("text", { x: x + 4, y: d * rowH + 14, text: label }));
      }
      var cx = x;
      (n.children || []).forEach(function (c, j) {
        var cw = n.value > 0 ? w * c.value / n.value : 0;
        place(c, cx, cw, d + 1, j);
        cx += cw;
      });
    }
    place(root, 0, width, 0, 0);
  }
  return { node: host, draw: render };
};
