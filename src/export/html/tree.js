// tfdebug's HTML report: the collapsible module tree. A node is {n: name, c: children,
// h: children not embedded, r: copies of a folded repeated block (last: the last copy's name,
// copies: one row per copy), f: [errors, warnings, infos]} plus the columns' values. Children are
// built when a node is first opened, so a large model costs only what is looked at.
"use strict";

// cols: [{label, num, mono, width, finding, get(node)}] (mono: code text, cut to the column); returns {node, reveal(path)} (reveal opens the path and
// highlights its row).
TF.moduleTree = function (root, cols, onTensor) {
  var box = TF.el("div", { class: "tree" });
  var template = "minmax(240px, 1fr) " + cols.map(function (c) {
    return (c.width || 96) + "px";
  }).join(" ");
  var head = TF.el("div", { class: "row headrow", style: "grid-template-columns:" + template }, TF.el("div", { text: "module" }));
  cols.forEach(function (c) {
    head.appendChild(TF.el("div", { class: c.num ? "numc" : "", text: c.label }));
  });
  box.appendChild(head);

  function label(node) {
    return node.r ? node.n + "–" + node.last : node.n;
  }
  function findingCell(node) {
    var cell = TF.el("div", { class: "fc" });
    var f = node.f || [0, 0, 0];
    ["error", "warning", "info"].forEach(function (s, i) {
      if (f[i] > 0) cell.appendChild(TF.el("span", { class: "badge " + s, title: TF.plural(f[i], s, s + "s"), text: TF.count(f[i]) }));
    });
    return cell;
  }
  function build(node, depth, path, container) {
    var kids = node.c || [];
    var open = false;
    var childBox = null;
    var tog = TF.el("span", { class: "tog", text: kids.length ? "▸" : "" });
    var nameCell = TF.el("div", { class: "name", style: "padding-left:" + depth * 16 + "px", title: path || "(whole model)" }, tog,
      TF.el("span", { text: depth === 0 ? "(whole model)" : label(node) }));
    if (node.r) nameCell.appendChild(TF.el("span", { class: "rep", text: "×" + TF.count(node.r) + " repeated" }));
    var row = TF.el("div", { class: "row", style: "grid-template-columns:" + template, "data-path": path }, nameCell);
    cols.forEach(function (c) {
      if (c.finding) {
        row.appendChild(findingCell(node));
        return;
      }
      var cell = TF.el("div", { class: c.num ? "numc" : c.mono ? "monoc" : "", text: c.get(node) });
      if (c.mono) cell.title = cell.textContent;  // cut to its column: the whole text on hover
      row.appendChild(cell);
    });
    container.appendChild(row);
    var entry = { node: node, row: row, path: path, children: null };
    function setOpen(value) {
      if (!kids.length) return;
      open = value;
      tog.textContent = open ? "▾" : "▸";
      if (open && !childBox) {
        childBox = TF.el("div");
        entry.children = [];
        if (node.r) {
          childBox.appendChild(TF.el("div", { class: "hidden-note", style: "padding-left:" + (depth + 1) * 16 + "px",
            text: "the structure of copy " + node.n + "; all " + TF.count(node.r) + " copies hold the same tensors (totals above are over all of them)" }));
        }
        var base = path ? path + "." : "";
        kids.forEach(function (k) {
          entry.children.push(build(k, depth + 1, base + k.n, childBox));
        });
        if (node.h) childBox.appendChild(TF.el("div", { class: "hidden-note", style: "padding-left:" + (depth + 1) * 16 + "px",
          text: TF.plural(node.h, "more module", "more modules") + " below the embedded depth (their totals are in this row)" }));
        row.after(childBox);
      }
      if (childBox) childBox.style.display = open ? "" : "none";
    }
    entry.setOpen = setOpen;
    nameCell.addEventListener("click", function () {
      setOpen(!open);
      if (onTensor && node.k !== undefined) onTensor(node);
    });
    // Open the first levels while they are narrow: the first view shows the model's shape.
    if (depth === 0 || (depth < 4 && kids.length <= 3 && !node.r)) setOpen(true);
    return entry;
  }
  var top = build(root, 0, "", box);

  return {
    node: box,
    // Opens the rows down to `path` (a tensor or module name) and highlights the deepest one.
    reveal: function (path) {
      var parts = path ? path.split(".") : [];
      var at = top;
      for (var i = 0; i < parts.length; i++) {
        at.setOpen(true);
        var next = null;
        var seg = parts[i];
        (at.children || []).forEach(function (e) {
          if (next) return;
          if (e.node.n === seg && !e.node.r) next = e;
        });
        if (!next) {
          var n = Number(seg);
          (at.children || []).forEach(function (e) {
            if (!next && e.node.r && /^[0-9]+$/.test(seg) && n >= Number(e.node.n) && n <= Number(e.node.last)) next = e;
          });
        }
        if (!next) break;
        at = next;
      }
      Array.prototype.forEach.call(box.querySelectorAll(".row.hl"), function (r) {
        r.classList.remove("hl");
      });
      at.row.classList.add("hl");
      at.row.scrollIntoView({ block: "center" });
      return at.path;
    }
  };
};
