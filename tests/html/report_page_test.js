// The HTML report in a real browser: Debian's Chromium, headless, driven by playwright-core
// (tests/npm). Run by tests/html/html_report_test.sh, which writes the pages:
//
//   node report_page_test.js WORK_DIR [SCREENSHOT_DIR]
//
// WORK_DIR holds run.html (tests/export/write_html_run.cpp's run), killed.html (a run killed
// after step 7), small.html and big.html (tests/html/make_checkpoints.py) and
// small.expected.json; graph.html and run_graph.html (tests/html/make_graph_model.py's model). Each page must load with no console message, no page error, no dialog and
// no request but the file itself; then each page's behaviour is checked with exact values.
// With SCREENSHOT_DIR, the screenshots of docs/html-report.md are written there.
"use strict";
const path = require("path");
const fs = require("fs");
const browserTest = require("./browser");

const work = process.argv[2];
const shots = process.argv[3];
const { check, fail, finish } = browserTest.checks();

// Opens `file`: {page, problems, loadMs}. No request but the file itself, not even a data: URL.
async function open(browser, file, width) {
  const url = browserTest.fileUrl(work, file);
  const opened = await browserTest.open(browser, url, { width: width || 1280, allowed: (u) => u === url });
  const loadMs = await opened.page.evaluate(() => performance.getEntriesByType("navigation")[0].loadEventEnd);
  return { ...opened, loadMs };
}

// Moves the pointer onto a chart's point (the chart's transparent overlay takes the events, as
// it does for a person's mouse).
async function hoverPoint(page, locator) {
  await locator.evaluate((n) => n.scrollIntoView({ block: "center" }));
  const box = await locator.boundingBox();
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
}

// A screenshot of a section, the page's whole width, at most `maxHeight` pixels high.
const pageShot = (page, selector, file, maxHeight) => browserTest.shot(page, selector, file, { maxHeight });

const text = (page, selector) => page.locator(selector).first().textContent();
const tip = (page, chart) => page.locator(`[data-chart="${chart}"] .tip`).textContent();
const fmt = (v) => String(Number(v.toPrecision(4))); // the page's TF.fmt for ordinary values

async function sections(page, ids, label) {
  for (const id of ids) {
    const heading = await page.locator(`section#${id} > h2`).count();
    check(`${label}: section #${id} is there`, heading === 1);
  }
  const nav = await page.locator("header.top nav a").count();
  check(`${label}: one link per section`, nav === ids.length, nav);
}

async function runPage(browser) {
  const { page, problems } = await open(browser, "run.html");
  check("run: no console message, error, dialog or request", problems.length === 0, problems);
  await sections(page, ["summary", "findings", "metrics", "gradients", "activations", "flight", "profile", "model", "config"], "run");

  // Findings: errors first, with a count per severity.
  const severities = await page.locator(".finding").evaluateAll((ns) => ns.map((n) => n.classList[1]));
  check("run: findings sorted by severity", JSON.stringify(severities) === JSON.stringify(["error", "error", "warning"]), severities);
  check("run: counts per severity", (await page.locator(".counts").first().innerText()).replace(/\s+/g, " ").trim() === "2 ERRORS 1 WARNING 0 INFO",
    await page.locator(".counts").first().innerText());

  // Hovering a point of the loss chart shows its value: 3 / (1 + 0.1 * 10) = 1.5 at step 10.
  await hoverPoint(page, page.locator('[data-chart="loss"] circle[data-x="10"]'));
  check("run: hover shows the loss at step 10", (await tip(page, "loss")) === "step 10\nloss 1.5", await tip(page, "loss"));
  await hoverPoint(page, page.locator('[data-chart="loss"] circle[data-x="25"]'));
  check("run: hover shows the loss at step 25", (await tip(page, "loss")) === "step 25\nloss " + fmt(3 / 3.5), await tip(page, "loss"));
  // NaN from step 41: one band per NaN step, and a label.
  check("run: a NaN band per NaN step", (await page.locator('[data-chart="loss"] .nan-gap').count()) === 19);
  check("run: the NaN gap is labelled", (await text(page, '[data-chart="loss"] .nan-label')) === "NaN from step 41");
  check("run: no point drawn for a NaN", (await page.locator('[data-chart="loss"] circle[data-x="41"]').count()) === 0);

  // Drag from step 10 to step 20 zooms to it; double-click resets.
  await page.locator('[data-chart="loss"]').evaluate((n) => n.scrollIntoView({ block: "center" }));
  const a = await page.locator('[data-chart="loss"] circle[data-x="10"]').boundingBox();
  const b = await page.locator('[data-chart="loss"] circle[data-x="20"]').boundingBox();
  // A few pixels outside the two points (the steps are ~19 px apart).
  await page.mouse.move(a.x + a.width / 2 - 3, a.y + 40);
  await page.mouse.down();
  await page.mouse.move(b.x + b.width / 2 + 3, a.y + 40, { steps: 5 });
  await page.mouse.up();
  const zoomed = await page.locator('[data-chart="loss"] circle').evaluateAll((ns) => ns.map((n) => Number(n.dataset.x)));
  check("run: drag zooms to steps 10-20", zoomed.length === 11 && zoomed[0] === 10 && zoomed[10] === 20, zoomed);
  await page.locator('[data-chart="loss"] rect.overlay').dblclick({ force: true });
  check("run: double-click resets the zoom", (await page.locator('[data-chart="loss"] circle').count()) === 41);
  // The wheel zooms in around the pointer.
  await hoverPoint(page, page.locator('[data-chart="loss"] circle[data-x="30"]'));
  await page.mouse.wheel(0, -300);
  const wheeled = await page.locator('[data-chart="loss"] circle').count();
  check("run: the wheel zooms in", wheeled > 0 && wheeled < 41, wheeled);
  await page.locator('[data-chart="loss"] rect.overlay').dblclick({ force: true });

  // Clicking the nonfinite finding shows its evidence: the module and step in the activation
  // heatmaps, the producing op in the flight recorder, the step on the loss chart.
  await page.locator('.finding[data-rule="nonfinite"]').click();
  const hl = page.locator('[data-heatmap="act_nonfinite"] .hl');
  check("run: the finding highlights blocks.1.mlp at step 41",
    (await hl.count()) === 1 && (await hl.getAttribute("data-module")) === "blocks.1.mlp" && (await hl.getAttribute("data-step")) === "41");
  check("run: the finding highlights the op that made the NaN",
    (await page.locator(".op.producer.hl .what").innerText()).startsWith("blocks.1.mlp / log"));
  check("run: the finding marks step 41 on the loss chart", (await page.locator('[data-chart="loss"] .marker.hl[data-x="41"]').count()) === 1);
  check("run: the finding opens its module in the tree", (await page.locator('.tree .row.hl').getAttribute("data-path")) === "blocks.1.mlp");
  const producerVisible = await page.locator(".op.producer").evaluate((n) => {
    const r = n.getBoundingClientRect();
    return r.top >= 0 && r.bottom <= window.innerHeight;
  });
  check("run: the page scrolled to the evidence", producerVisible);
  // The dead-units warning points at blocks.0.mlp in the dead-units heatmap.
  await page.locator('.finding[data-rule="dead_units"]').click();
  check("run: dead_units highlights blocks.0.mlp", (await page.locator('[data-heatmap="act_dead_fraction"] .hl').getAttribute("data-module")) === "blocks.0.mlp");

  // The flight recorder: the producer is the log, made from finite inputs.
  check("run: the producer is tagged", (await text(page, ".op.producer .tag")) === "made the first NaN/Inf here, from finite inputs");
  // The profile: its module table sorts by a header, and the flame graph has the modules.
  const modules = page.locator("#profile .datatable").first();
  await modules.locator('th[data-col="self time"]').click();
  check("run: profile modules sort by self time", (await modules.locator("tbody tr td").first().textContent()) === "head",
    await modules.locator("tbody tr td").first().textContent());
  check("run: the flame graph has blocks.1.mlp.fc1", (await page.locator('#profile .flame rect[data-name="blocks.1.mlp.fc1"]').count()) === 1);
  // The configuration table filters.
  const config = page.locator("#config .datatable").first();
  await config.locator("input").fill("rules.dead_units.window");
  check("run: the configuration filters", (await config.locator("tbody tr").count()) === 1 &&
    (await config.locator("tbody tr td").nth(1).textContent()) === "5");
  await config.locator("input").fill("");
  if (shots) {
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: path.join(shots, "html-report-run.png"), fullPage: true, clip: { x: 0, y: 0, width: 1280, height: 2050 } });
    await pageShot(page, "#flight", path.join(shots, "html-report-flight.png"), 1000);
    await pageShot(page, "#profile", path.join(shots, "html-report-profile.png"), 700);
  }
  await page.close();
}

async function killedPage(browser) {
  const { page, problems } = await open(browser, "killed.html");
  check("killed: no console message, error, dialog or request", problems.length === 0, problems);
  check("killed: the status says so", (await text(page, "#summary .stat .v")) === "did not finish");
  check("killed: the note explains it", (await text(page, "#summary .note")).startsWith("The run did not finish"));
  await page.close();
}

async function smallPage(browser) {
  const expected = JSON.parse(fs.readFileSync(path.join(work, "small.expected.json"), "utf8"));
  const { page, problems } = await open(browser, "small.html");
  check("small: no console message, error, dialog or request", problems.length === 0, problems);
  await sections(page, ["summary", "findings", "model", "layers", "tensors", "metadata"], "small");
  const hostile = "head.</script><script>alert(1)</script>\u2028.weight";
  const names = await page.locator("#tensors tbody tr td:first-child").allTextContents();
  check("small: a hostile name is shown as text", names.includes(hostile));
  check("small: every tensor is a row", names.length === expected.tensors, names.length);
  check("small: the script in the name did not run", (await page.locator("script").count()) === 2);

  // Sorting: by abs max, largest first (7.5), then smallest first (the all-zero tensor).
  const table = page.locator("#tensors .datatable");
  await table.locator('th[data-col="abs max"]').click();
  const first = async (col) => table.locator("tbody tr").first().locator("td").nth(col).textContent();
  check("small: sorted by abs max", (await first(0)) === "layers.3.mlp.down.weight" && (await first(9)) === "7.5", [await first(0), await first(9)]);
  await table.locator('th[data-col="abs max"]').click();
  check("small: sorted by abs max, ascending", (await first(0)) === "layers.1.attn.k.weight" && (await first(9)) === "0");
  await table.locator('th[data-col="NaN"]').click();
  check("small: sorted by NaN", (await first(0)) === "layers.2.mlp.up.weight" && (await first(10)) === "3");
  // Filtering: a glob and plain text.
  await table.locator("input").fill("*.attn.k.*");
  check("small: a glob filters", (await table.locator("tbody tr").count()) === 4 && (await table.locator(".count").textContent()) === "4 of 22 rows");
  await table.locator("input").fill("layers.2.");
  check("small: text filters", (await table.locator("tbody tr").count()) === 5);
  await table.locator("input").fill("");

  // Clicking the nonfinite finding opens its tensor in the tree and highlights its row.
  await page.locator('.finding[data-rule="nonfinite"]').click();
  check("small: the finding highlights its table row", (await page.locator("#tensors tr.hl td").first().textContent()) === "layers.2.mlp.up.weight");
  check("small: the finding opens its tensor in the tree", (await page.locator(".tree .row.hl").getAttribute("data-path")) === "layers.2.mlp.up.weight");
  // The repeated layers are folded: layers 0-3 have the same tensors.
  check("small: repeated layers are folded", (await page.locator(".tree .rep").first().textContent()) === "×4 repeated");

  // Hovering layer 0 of the per-layer chart shows numpy's rms and largest |value|.
  await hoverPoint(page, page.locator('[data-chart="layer_scale"] circle[data-x="0"][data-series="rms"]'));
  const want = "layer 0\nrms " + fmt(expected.layer0_rms) + "\nabs max " + fmt(expected.layer0_abs_max);
  check("small: hover shows layer 0's rms and abs max", (await tip(page, "layer_scale")) === want, await tip(page, "layer_scale"));
  if (shots) {
    await page.locator('.tree .row[data-path="layers.0"] .name').click(); // open the fold for the picture
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: path.join(shots, "html-report-checkpoint.png"), fullPage: true, clip: { x: 0, y: 0, width: 1280, height: 1500 } });
    await pageShot(page, "#tensors", path.join(shots, "html-report-tensors.png"), 900);
  }
  await page.close();
}

async function bigPage(browser) {
  const { page, problems, loadMs } = await open(browser, "big.html");
  check("big: no console message, error, dialog or request", problems.length === 0, problems);
  const bytes = fs.statSync(path.join(work, "big.html")).size;
  console.log("big.html: " + bytes + " bytes, loaded in " + Math.round(loadMs) + " ms");
  check("big: the page stays under 1 MiB", bytes < 1 << 20, bytes);
  check("big: 1,000 layers fold into one row", (await page.locator(".tree .rep").first().textContent()) === "×1,000 repeated");
  check("big: the table embeds its bound", (await page.locator("#tensors .count").textContent()) === "2,000 rows, 200 shown");
  check("big: the page says what it left out", (await text(page, "#summary .note")).startsWith("This page embeds 2,000 of 100,002 tensors"));
  // Rows embedded: the two tensors with findings (the constant embed and head), then the first of
  // the equally large ones in file order.
  await page.locator("#tensors input").fill("model.layers.0.w5?");
  check("big: a glob filters the embedded rows", (await page.locator("#tensors tbody tr").count()) === 10);
  await page.locator("#tensors input").fill("model.head.*");
  check("big: tensors with findings are embedded", (await page.locator("#tensors tbody tr").count()) === 1);
  await page.close();
}

// graph.html (inspect of tests/html/make_graph_model.py's ONNX model) and run_graph.html (a run
// directory holding that model as model.onnx): the model graph section, ops by module.
async function graphPages(browser) {
  const { page, problems } = await open(browser, "graph.html");
  check("graph: no console message, error, dialog or request", problems.length === 0, problems);
  await sections(page, ["summary", "findings", "model", "layers", "tensors", "graph", "metadata"], "graph");
  const lead = await text(page, "#graph .lead");
  check("graph: the lead counts the ops and names the file", lead.startsWith("13 ops from graph.onnx (written by make_graph_model.py)"), lead);
  const tree = page.locator("#graph .tree");
  const row = (p) => tree.locator(`.row[data-path="${p}"]`);
  const cells = async (p) => (await row(p).locator("div").allTextContents()).map((t) => t.trim());
  check("graph: the whole model has 13 ops, blocks 12", (await cells(""))[1] === "13" && (await cells("blocks"))[1] === "12");
  check("graph: block 0 is closed at first", (await row("blocks.0.fc1").count()) === 0);
  await row("blocks.0").locator(".name").click();
  const matmul = await cells("blocks.0.fc1.#0 MatMul");
  check("graph: opening block 0 shows fc1's MatMul, its output and what it reads",
    JSON.stringify(matmul.slice(1)) === JSON.stringify(["", "f32[2,32]", "x, weight"]), matmul);
  const residual = await cells("blocks.0.#5 Add");
  check("graph: the residual Add reads the input and fc2's Add", residual[3] === "x, #4 Add", residual);
  check("graph: a cut cell has its whole text as a tooltip",
    (await row("blocks.0.#5 Add").locator(".monoc").nth(1).getAttribute("title")) === "x, #4 Add");
  check("graph: the head's MatMul outputs y's type", (await cells("head.#12 MatMul"))[2] === "f32[2,4]");
  if (shots) await pageShot(page, "#graph", path.join(shots, "html-report-graph.png"), 900);
  await page.close();

  const run = await open(browser, "run_graph.html");
  check("run graph: no console message, error, dialog or request", run.problems.length === 0, run.problems);
  await sections(run.page, ["summary", "findings", "metrics", "gradients", "activations", "flight", "profile", "model", "graph", "config"], "run graph");
  const runLead = await text(run.page, "#graph .lead");
  check("run graph: the run directory's model.onnx", runLead.startsWith("13 ops from model.onnx"), runLead);
  await run.page.close();
}

(async () => {
  const browser = await browserTest.launch();
  try {
    await runPage(browser);
    await killedPage(browser);
    await smallPage(browser);
    await bigPage(browser);
    await graphPages(browser);
  } catch (e) {
    fail(e);
  }
  await browser.close();
  finish("html report pages");
})();
