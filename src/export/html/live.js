// tfdebug's live dashboard (tfdebug::serve): the run page, fed by the server's Server-Sent Events.
// The stream's first event is the run so far ("snapshot": the same data object a report embeds);
// every later one extends it ("step", "finding", "flight", "profile", "graph", "end"), and the page
// is drawn again from it, at most four times a second. A dropped stream reconnects by itself with
// Last-Event-ID and resumes where it stopped (or gets a fresh snapshot).
"use strict";

TF.live = function () {
  var token = new URLSearchParams(window.location.search).get("token");
  var url = "events" + (token ? "?token=" + encodeURIComponent(token) : "");
  var d = null;
  var pending = null;
  var state = "connecting";
  var draw = function () {
    pending = null;
    if (!d) return;
    var y = window.scrollY;
    TF.clearPage();
    TF.data = d;
    d.live.state = state;
    TF.runPage(d);
    window.scrollTo(0, y);
  };
  var later = function () {
    if (!pending) pending = setTimeout(draw, 250);
  };
  var source = new EventSource(url);
  source.onopen = function () {
    state = "live";
    later();
  };
  source.onerror = function () {
    state = d && d.run.complete ? "finished" : "reconnecting";
    if (d && d.run.complete) source.close();
    later();
  };
  source.onmessage = function (m) {
    var ev = JSON.parse(m.data);
    if (ev.kind === "snapshot") {
      d = ev.data;
      draw();
      return;
    }
    if (!d) return;
    TF.liveApply(d, ev);
    if (ev.kind === "end") state = "finished";
    later();
  };
  TF.liveSource = source;
};

// Removes what TF.page put on the page, before it is drawn again.
TF.clearPage = function () {
  ["header.top", "main", "footer"].forEach(function (sel) {
    var n = document.querySelector("body > " + sel);
    if (n) n.remove();
  });
};

// Extends the page's data object `d` by one event, as the server's snapshot would have it.
TF.liveApply = function (d, ev) {
  var kinds = ["grad_norm", "update_ratio", "act_abs_max", "act_zero_fraction", "act_nonfinite", "act_dead_fraction"];
  if (ev.kind === "step") {
    if (!d.metrics) {
      d.metrics = { steps: [], stride: 1, module_steps: [], module_stride: 1, lines: 0, cut_off: false, modules_total: 0, modules: [], loss: [] };
      kinds.forEach(function (k) {
        d.metrics[k] = null;
      });
    }
    var m = d.metrics;
    var n = m.steps.length;
    var blank = function () {
      var row = [];
      for (var i = 0; i < n; i++) row.push(null);
      return row;
    };
    var values = {};
    ev.modules.forEach(function (e) {
      values[e[0]] = e;
      if (m.modules.indexOf(e[0]) < 0) {
        m.modules.push(e[0]);
        kinds.forEach(function (k) {
          if (m[k]) m[k].push(blank());
        });
      }
    });
    m.modules_total = Math.max(m.modules_total, m.modules.length);
    m.steps.push(ev.step);
    m.module_steps = m.steps;
    m.loss.push(ev.loss);
    m.lines++;
    kinds.forEach(function (k, j) {
      var any = m.modules.some(function (name) {
        return values[name] && values[name][j + 1] !== null;
      });
      if (!m[k] && any) m[k] = m.modules.map(blank);
      if (!m[k]) return;
      m.modules.forEach(function (name, i) {
        m[k][i].push(values[name] ? values[name][j + 1] : null);
      });
    });
    // The page keeps the latest max_steps steps, as the server does.
    while (m.steps.length > d.live.max_steps) {
      m.steps.shift();
      m.loss.shift();
      kinds.forEach(function (k) {
        if (m[k]) m[k].forEach(function (row) {
          row.shift();
        });
      });
    }
    if (d.run.steps === 0) d.run.first_step = ev.step;
    d.run.steps++;
    d.run.last_step = ev.step;
  } else if (ev.kind === "finding") {
    d.findings.push(ev.finding);
  } else if (ev.kind === "end") {
    d.run = ev.run;
    d.findings = ev.findings;
    d.spectral = ev.spectral;
  } else if (ev.kind === "flight" || ev.kind === "profile" || ev.kind === "graph") {
    d[ev.kind] = ev[ev.kind];
  }
};
