// tfdebug's HTML report: shared helpers. The page's data is JSON in #tfdebug-data; names in it
// come from files that may be hostile, so the scripts build every element with createElement and
// set text with textContent: nothing from the data is ever parsed as markup (Note [Script-safe
// JSON] in src/export/html_page.cpp).
"use strict";

var TF = {};

TF.SVG = "http://www.w3.org/2000/svg";
TF.palette = ["#0072b2", "#e69f00", "#009e73", "#d55e00", "#cc79a7", "#56b4e9", "#f0e442", "#000000"];
TF.severityOrder = { error: 0, warning: 1, info: 2 };

// An element: el("div", {class: "x", onclick: f}, child, "text", ...).
TF.el = function (tag, attrs) {
  var node = document.createElement(tag);
  TF.fill(node, attrs, Array.prototype.slice.call(arguments, 2));
  return node;
};
TF.svg = function (tag, attrs) {
  var node = document.createElementNS(TF.SVG, tag);
  TF.fill(node, attrs, Array.prototype.slice.call(arguments, 2));
  return node;
};
TF.fill = function (node, attrs, children) {
  if (attrs) {
    Object.keys(attrs).forEach(function (key) {
      var value = attrs[key];
      if (value === undefined || value === null) return;
      if (key.slice(0, 2) === "on") node.addEventListener(key.slice(2), value);
      else if (key === "text") node.textContent = value;
      else node.setAttribute(key, value);
    });
  }
  children.forEach(function (child) {
    if (child === null || child === undefined) return;
    node.appendChild(typeof child === "string" || typeof child === "number" ? document.createTextNode(String(child)) : child);
  });
};
TF.clear = function (node) {
  while (node.firstChild) node.removeChild(node.firstChild);
};

// Numbers as the writer sends them: "NaN", "Inf", "-Inf" for the non-finite, null for none.
TF.num = function (v) {
  if (v === null || v === undefined) return null;
  if (typeof v === "number") return v;
  if (v === "NaN") return NaN;
  if (v === "Inf") return Infinity;
  if (v === "-Inf") return -Infinity;
  return null;
};

// A value as people read it: 4 significant digits, exponents for the very small and large.
TF.fmt = function (v) {
  if (v === null || v === undefined) return "–";
  if (Number.isNaN(v)) return "NaN";
  if (v === Infinity) return "Inf";
  if (v === -Infinity) return "-Inf";
  if (v === 0) return "0";
  var a = Math.abs(v);
  if (Number.isInteger(v) && a < 1e7) return String(v);
  if (a >= 1e5 || a < 1e-3) return v.toExponential(3).replace(/\.?0+e/, "e");
  return String(Number(v.toPrecision(4)));
};
TF.count = function (v) {
  return Number(v).toLocaleString("en-US");
};
TF.bytes = function (v) {
  var units = ["B", "KiB", "MiB", "GiB", "TiB"];
  var i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return (i === 0 ? String(v) : v.toFixed(v < 10 ? 2 : 1)) + " " + units[i];
};
TF.duration = function (ns) {
  if (ns >= 1e9) return (ns / 1e9).toFixed(2) + " s";
  if (ns >= 1e6) return (ns / 1e6).toFixed(2) + " ms";
  if (ns >= 1e3) return (ns / 1e3).toFixed(1) + " µs";
  return Math.round(ns) + " ns";
};
TF.plural = function (n, one, many) {
  return TF.count(n) + " " + (n === 1 ? one : many);
};

// Viridis (the control points of viz/color.cpp), t in [0, 1].
TF.viridis = [
  [68, 1, 84], [72, 40, 120], [62, 73, 137], [49, 104, 142], [38, 130, 142],
  [31, 158, 137], [53, 183, 121], [110, 206, 88], [253, 231, 37]
];
TF.colormap = function (t) {
  t = Math.max(0, Math.min(1, t));
  var x = t * (TF.viridis.length - 1);
  var i = Math.min(TF.viridis.length - 2, Math.floor(x));
  var f = x - i;
  var a = TF.viridis[i];
  var b = TF.viridis[i + 1];
  return [0, 1, 2].map(function (k) {
    return Math.round(a[k] + (b[k] - a[k]) * f);
  });
};

// The page's frame: a header with a link per section, and the sections in order.
TF.page = function (title, sections) {
  var nav = TF.el("nav");
  var main = TF.el("main");
  sections.forEach(function (s) {
    if (!s) return;
    nav.appendChild(TF.el("a", { href: "#" + s.id, text: s.label }));
    main.appendChild(s.node);
  });
  var header = TF.el("header", { class: "top" },
    TF.el("div", { class: "brand" }, "tf", TF.el("span", { text: "debug" })),
    TF.el("div", { class: "title", text: title }), nav);
  document.body.appendChild(header);
  document.body.appendChild(main);
  document.body.appendChild(TF.el("footer", { text: TF.data.live ? "Served live by " + TF.data.generator + ": this page follows the run as it goes."
    : "Written by " + TF.data.generator + ". Self-contained: no request leaves this file." }));
};
TF.section = function (id, label, lead) {
  var node = TF.el("section", { class: "card", id: id }, TF.el("h2", { text: label }),
    lead ? TF.el("p", { class: "lead", text: lead }) : null);
  return { id: id, label: label, node: node };
};
TF.stat = function (key, value, tone) {
  return TF.el("div", { class: "stat" + (tone ? " " + tone : "") }, TF.el("div", { class: "k", text: key }),
    TF.el("div", { class: "v", text: value }));
};
TF.kv = function (pairs) {
  var box = TF.el("div", { class: "kv" });
  pairs.forEach(function (p) {
    box.appendChild(TF.el("div", { class: "k", text: p[0] }));
    box.appendChild(TF.el("div", { class: "v", text: p[1] }));
  });
  return box;
};

// Findings, errors first: a click calls `focus(finding)`, which shows its evidence.
TF.sortedFindings = function (findings) {
  return findings.map(function (f, i) {
    f.id = i;
    return f;
  }).slice().sort(function (a, b) {
    return TF.severityOrder[a.severity] - TF.severityOrder[b.severity] || a.step - b.step || a.id - b.id;
  });
};
TF.findingList = function (findings, where, focus) {
  var counts = { error: 0, warning: 0, info: 0 };
  findings.forEach(function (f) {
    counts[f.severity]++;
  });
  var box = TF.el("div");
  box.appendChild(TF.el("div", { class: "counts" },
    TF.el("span", { class: "badge error", text: TF.plural(counts.error, "error", "errors") }),
    TF.el("span", { class: "badge warning", text: TF.plural(counts.warning, "warning", "warnings") }),
    TF.el("span", { class: "badge info", text: TF.count(counts.info) + " info" })));
  if (findings.length === 0) {
    box.appendChild(TF.el("p", { class: "empty", text: "No findings: every rule passed." }));
    return box;
  }
  var list = TF.el("ul", { class: "findings" });
  // Info findings wait behind a button when there are more than a few: errors and warnings are
  // what a reader came for. A very long list shows its first kMax items until asked.
  var kMax = 300;
  var sorted = TF.sortedFindings(findings);
  var infos = counts.info > 3 && counts.info < findings.length;
  var shown = sorted.filter(function (f) {
    return !(infos && f.severity === "info");
  });
  var rest = sorted.slice(shown.length);
  var more = null;
  if (shown.length > kMax) {
    rest = shown.slice(kMax).concat(rest);
    shown = shown.slice(0, kMax);
  }
  if (rest.length) {
    more = TF.el("button", { class: "more", type: "button", text: "show " + TF.plural(rest.length, "more finding", "more findings") +
      (infos ? " (" + TF.plural(counts.info, "info", "info") + ")" : "") });
    more.addEventListener("click", function () {
      rest.forEach(add);
      more.remove();
    });
  }
  shown.forEach(add);
  function add(f) {
    var chips = TF.el("div", { class: "chips" });
    (f.evidence || []).forEach(function (e) {
      var value = Array.isArray(e[1]) ? "[" + e[1].join(", ") + "]" : typeof e[1] === "string" &&
        TF.num(e[1]) === null ? e[1] : TF.fmt(TF.num(e[1]));
      chips.appendChild(TF.el("span", { class: "chip", text: e[0] + " " + value }));
    });
    var item = TF.el("li", { class: "finding " + f.severity, "data-rule": f.rule, "data-id": f.id, tabindex: "0" },
      TF.el("div", { class: "head" }, TF.el("span", { class: "badge " + f.severity, text: f.severity }),
        TF.el("span", { class: "rule", text: f.rule }), TF.el("span", { class: "where", text: where(f) })),
      TF.el("p", { class: "msg", text: f.message }),
      f.suggestion ? TF.el("p", { class: "try", text: f.suggestion }) : null, chips);
    var activate = function () {
      Array.prototype.forEach.call(list.querySelectorAll(".finding.active"), function (n) {
        n.classList.remove("active");
      });
      item.classList.add("active");
      focus(f);
    };
    item.addEventListener("click", activate);
    item.addEventListener("keydown", function (ev) {
      if (ev.key === "Enter") activate();
    });
    list.appendChild(item);
  }
  box.appendChild(list);
  if (more) box.appendChild(more);
  return box;
};

// The tooltip of a chart: one per host element.
TF.tip = function (host) {
  var tip = TF.el("div", { class: "tip" });
  host.appendChild(tip);
  return {
    node: tip,
    show: function (text, x, y) {
      tip.textContent = text;
      tip.style.display = "block";
      var w = tip.offsetWidth;
      var left = x + 14 + w > host.clientWidth ? x - w - 10 : x + 14;
      tip.style.left = Math.max(0, left) + "px";
      tip.style.top = Math.max(0, y - 10) + "px";
    },
    hide: function () {
      tip.style.display = "none";
    }
  };
};

TF.start = function () {
  TF.data = JSON.parse(document.getElementById("tfdebug-data").textContent);
  if (TF.data.kind === "live") TF.live();
  else if (TF.data.kind === "run") TF.runPage(TF.data);
  else if (TF.data.kind === "analysis") TF.analysisPage(TF.data);
  else TF.checkpointPage(TF.data);
};
