// The attention page (src/export/attention_view.cpp): BertViz's head view and model view over
// the JSON in #attention-data ({title, tokens, layers, heads, weights: [layers][heads][n][n]
// flattened, rows = queries}). Text from the data is only ever set as text.
"use strict";
(function () {
  const data = JSON.parse(document.getElementById("attention-data").textContent);
  const n = data.tokens.length;
  const H = data.heads;
  const SVG = "http://www.w3.org/2000/svg";
  const MIN_WEIGHT = 0.01; // lines fainter than this are not drawn
  const COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
    "#bcbd22", "#17becf", "#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173", "#3182bd"];
  const colour = (h) => COLOURS[h % COLOURS.length];
  const weight = (l, h, i, j) => data.weights[((l * H + h) * n + i) * n + j];

  function el(tag, attrs, text) {
    const e = document.createElement(tag);
    for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function svg(tag, attrs, text) {
    const e = document.createElementNS(SVG, tag);
    for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }

  document.title = data.title + " \u2014 attention \u2014 tfdebug";
  document.body.appendChild(el("h1", {}, "Attention: " + data.title));

  // Head view: one layer, selected heads, a line from query i (left) to key j (right).
  const headSection = el("section", { id: "head-view" });
  headSection.appendChild(el("h2", {}, "Head view"));
  const controls = el("div", { class: "controls" });
  const layerLabel = el("label", {}, "Layer ");
  const layerSelect = el("select", { id: "layer" });
  data.layers.forEach((name, l) => layerSelect.appendChild(el("option", { value: String(l) }, l + ": " + name)));
  layerLabel.appendChild(layerSelect);
  controls.appendChild(layerLabel);
  const shown = [];
  for (let h = 0; h < H; h++) {
    shown.push(true);
    const label = el("label", { class: "head-toggle" });
    const box = el("input", { type: "checkbox", "data-head": String(h) });
    box.checked = true;
    box.addEventListener("change", () => {
      shown[h] = box.checked;
      drawHeads();
    });
    label.appendChild(box);
    const swatch = el("span", { class: "swatch" });
    swatch.style.background = colour(h);
    label.appendChild(swatch);
    label.appendChild(document.createTextNode("head " + h));
    controls.appendChild(label);
  }
  headSection.appendChild(controls);
  headSection.appendChild(el("p", { class: "note" },
    "Queries on the left, keys on the right; a line's opacity is its weight (weights under " + MIN_WEIGHT +
    " are not drawn). Point at a token to see only its lines."));
  const rowHeight = 22;
  const width = 420;
  const headSvg = svg("svg", { id: "head-svg", width: String(width), height: String(n * rowHeight + 10) });
  headSection.appendChild(headSvg);
  document.body.appendChild(headSection);

  function drawHeads() {
    while (headSvg.firstChild) headSvg.removeChild(headSvg.firstChild);
    const l = Number(layerSelect.value);
    const lines = svg("g", { class: "lines" });
    headSvg.appendChild(lines);
    const y = (i) => 10 + i * rowHeight + rowHeight / 2;
    for (let h = 0; h < H; h++) {
      if (!shown[h]) continue;
      for (let i = 0; i < n; i++) {
        for (let j = 0; j < n; j++) {
          const w = weight(l, h, i, j);
          if (w < MIN_WEIGHT) continue;
          const line = svg("line", {
            class: "attn", x1: "110", y1: String(y(i)), x2: String(width - 110), y2: String(y(j)),
            stroke: colour(h), "stroke-width": "2", "stroke-opacity": String(w),
            "data-layer": String(l), "data-head": String(h), "data-query": String(i), "data-key": String(j),
            "data-weight": String(w),
          });
          line.appendChild(svg("title", {}, "head " + h + ": " + data.tokens[i] + " \u2192 " + data.tokens[j] + " " + w));
          lines.appendChild(line);
        }
      }
    }
    for (let i = 0; i < n; i++) {
      const left = svg("text", { x: "100", y: String(y(i) + 4), "text-anchor": "end", class: "query", "data-token": String(i) }, data.tokens[i]);
      left.addEventListener("mouseenter", () => showOnly(i));
      left.addEventListener("mouseleave", () => showOnly(null));
      headSvg.appendChild(left);
      headSvg.appendChild(svg("text", { x: String(width - 100), y: String(y(i) + 4), class: "key", "data-token": String(i) }, data.tokens[i]));
    }
  }
  // Pointing at a query token hides the other tokens' lines (the lines stay: no redraw under
  // the pointer).
  function showOnly(token) {
    for (const line of headSvg.querySelectorAll("line.attn"))
      line.style.display = token === null || Number(line.dataset.query) === token ? "" : "none";
    for (const text of headSvg.querySelectorAll("text.query"))
      text.setAttribute("class", Number(text.dataset.token) === token ? "query active" : "query");
  }
  layerSelect.addEventListener("change", drawHeads);

  // Model view: every layer x head as a small heatmap (rows = queries); a click shows it above.
  const modelSection = el("section", { id: "model-view" });
  modelSection.appendChild(el("h2", {}, "Model view"));
  modelSection.appendChild(el("p", { class: "note" }, "Rows are layers, columns heads; darker is more weight. Click one to see it in the head view."));
  const grid = el("div", { class: "grid" });
  grid.style.gridTemplateColumns = "repeat(" + H + ", max-content)";
  const cellSize = Math.max(3, Math.min(10, Math.floor(160 / n)));
  for (let l = 0; l < data.layers.length; l++) {
    for (let h = 0; h < H; h++) {
      const cell = el("div", { class: "cell", "data-layer": String(l), "data-head": String(h) });
      cell.appendChild(el("div", { class: "caption" }, "L" + l + " H" + h));
      const map = svg("svg", { width: String(n * cellSize), height: String(n * cellSize) });
      for (let i = 0; i < n; i++) {
        for (let j = 0; j < n; j++) {
          const w = weight(l, h, i, j);
          map.appendChild(svg("rect", {
            x: String(j * cellSize), y: String(i * cellSize), width: String(cellSize), height: String(cellSize),
            fill: colour(h), "fill-opacity": String(Math.max(w, 0.02)), "data-query": String(i), "data-key": String(j),
            "data-weight": String(w),
          }));
        }
      }
      cell.appendChild(map);
      cell.addEventListener("click", () => {
        layerSelect.value = String(l);
        for (const box of controls.querySelectorAll("input[type=checkbox]")) {
          box.checked = Number(box.dataset.head) === h;
          shown[Number(box.dataset.head)] = box.checked;
        }
        drawHeads();
        headSection.scrollIntoView();
      });
      grid.appendChild(cell);
    }
  }
  modelSection.appendChild(grid);
  document.body.appendChild(modelSection);
  drawHeads();
})();
