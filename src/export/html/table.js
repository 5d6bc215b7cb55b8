// tfdebug's HTML report: tables that sort (click a header; again for the other direction) and
// filter (a glob or plain text over one column), shown a page of rows at a time so that a table
// of thousands of rows costs the rows on screen.
"use strict";

// A glob ("*.attn.*", "layers.?.mlp") or plain text as a case-insensitive test.
TF.matcher = function (text) {
  text = text.trim().toLowerCase();
  if (!text) return function () {
    return true;
  };
  if (/[*?]/.test(text)) {
    var re = new RegExp("^" + text.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*").replace(/\?/g, ".") + "$");
    return function (s) {
      return re.test(String(s).toLowerCase());
    };
  }
  return function (s) {
    return String(s).toLowerCase().indexOf(text) >= 0;
  };
};

// opts: {columns: [{label, num, mono, fmt, bad(value, row)}], rows (arrays), sort (column index,
// descending for numbers), filter (the label of the column the filter box searches), pageSize,
// key (column whose value names a row, for highlight)}. Returns {node, highlight(value)}.
TF.table = function (opts) {
  var cols = opts.columns;
  var pageSize = opts.pageSize || 100;
  var sortCol = opts.sort === undefined ? -1 : opts.sort;
  var sortDesc = sortCol >= 0 && !!cols[sortCol].num;
  var filterCol = opts.filter ? cols.findIndex(function (c) {
    return c.label === opts.filter;
  }) : -1;
  var test = TF.matcher("");
  var shown = pageSize;
  var highlighted = null;
  var box = TF.el("div", { class: "datatable" });
  var bar = TF.el("div", { class: "tablebar" });
  var input = null;
  var countNode = TF.el("span", { class: "count" });
  if (filterCol >= 0) {
    input = TF.el("input", { type: "search", placeholder: "filter " + opts.filter + " (text or glob: *.attn.*)", "aria-label": "filter" });
    input.addEventListener("input", function () {
      test = TF.matcher(input.value);
      shown = pageSize;
      render();
    });
    bar.appendChild(input);
  }
  bar.appendChild(countNode);
  box.appendChild(bar);
  var scroll = TF.el("div", { class: "scroll" });
  var table = TF.el("table", { class: "data" });
  var thead = TF.el("thead");
  var tbody = TF.el("tbody");
  table.appendChild(thead);
  table.appendChild(tbody);
  scroll.appendChild(table);
  box.appendChild(scroll);
  var more = TF.el("button", { class: "more", type: "button" });
  more.addEventListener("click", function () {
    shown += pageSize;
    render();
  });
  box.appendChild(more);

  function value(row, i) {
    var v = row[i];
    return cols[i].num ? TF.num(v) : v;
  }
  function compare(a, b) {
    var x = value(a, sortCol);
    var y = value(b, sortCol);
    if (cols[sortCol].num) {
      // No value sorts last either way; NaN sorts as the largest (it is the news).
      if (x === null || y === null) return (x === null) - (y === null);
      var xv = Number.isNaN(x) ? Infinity : x;
      var yv = Number.isNaN(y) ? Infinity : y;
      if (xv === yv) return 0;
      return sortDesc ? (yv > xv ? 1 : -1) : (xv > yv ? 1 : -1);
    }
    var c = String(x).localeCompare(String(y));
    return sortDesc ? -c : c;
  }
  function header() {
    TF.clear(thead);
    var tr = TF.el("tr");
    cols.forEach(function (c, i) {
      var th = TF.el("th", { class: "sortable" + (c.num ? " num" : ""), "data-col": c.label, title: "sort by " + c.label }, c.label,
        i === sortCol ? TF.el("span", { class: "dir", text: sortDesc ? " ▾" : " ▴" }) : null);
      th.addEventListener("click", function () {
        if (sortCol === i) sortDesc = !sortDesc;
        else {
          sortCol = i;
          sortDesc = !!c.num;
        }
        render();
      });
      tr.appendChild(th);
    });
    thead.appendChild(tr);
  }
  var view = [];
  function render() {
    header();
    view = opts.rows.filter(function (r) {
      return filterCol < 0 || test(r[filterCol]);
    });
    if (sortCol >= 0) view.sort(compare);
    TF.clear(tbody);
    var n = Math.min(shown, view.length);
    for (var k = 0; k < n; k++) {
      var row = view[k];
      var tr = TF.el("tr", opts.key !== undefined ? { "data-key": row[opts.key] } : {});
      if (highlighted !== null && opts.key !== undefined && row[opts.key] === highlighted) tr.className = "hl";
      cols.forEach(function (c, i) {
        var v = value(row, i);
        var text = c.fmt ? c.fmt(v, row) : v === null || v === undefined ? "–" : String(v);
        var cls = (c.num ? "num" : "") + (c.mono ? " mono" : "") + (c.nowrap ? " nowrap" : "") + (c.bad && c.bad(v, row) ? " bad" : "");
        if (c.render) tr.appendChild(TF.el("td", { class: cls }, c.render(row)));
        else tr.appendChild(TF.el("td", { class: cls, text: text }));
      });
      tbody.appendChild(tr);
    }
    countNode.textContent = (view.length === opts.rows.length ? TF.plural(view.length, "row", "rows") : TF.count(view.length) + " of " + TF.plural(opts.rows.length, "row", "rows")) +
      (n < view.length ? ", " + TF.count(n) + " shown" : "");
    more.style.display = n < view.length ? "" : "none";
    more.textContent = "show " + TF.count(Math.min(pageSize, view.length - n)) + " more";
  }
  render();
  return {
    node: box,
    // Shows the row whose key column is `v` (clearing a filter that hides it) and highlights it.
    highlight: function (v) {
      highlighted = v;
      if (input && !opts.rows.some(function (r) { return r[opts.key] === v && test(r[filterCol]); })) {
        input.value = "";
        test = TF.matcher("");
      }
      render();
      var at = view.findIndex(function (r) {
        return r[opts.key] === v;
      });
      if (at >= shown) {
        shown = at + 1;
        render();
      }
      return tbody.querySelector("tr.hl");
    }
  };
};
