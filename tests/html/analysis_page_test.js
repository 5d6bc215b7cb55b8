// The analyses of a run in a real browser (Debian's Chromium through playwright-core): the run page
// that `tfdebug report` wrote after explain, attack and robust saved into the run directory, and
// the page of its own that `robust --html` wrote. Run by tests/html/analysis_page_test.sh:
//
//   node analysis_page_test.js WORK_DIR [SCREENSHOT_DIR]
//
// Each page must load with no console message, no page error and no request but the file itself;
// what it draws is checked against the commands' --json (WORK_DIR/ig.json, pgd.json, robust.json).
"use strict";
const path = require("path");
const fs = require("fs");
const browserTest = require("./browser");

const work = process.argv[2];
const shots = process.argv[3];
const { check, fail, finish } = browserTest.checks();

const open = (browser, file) => browserTest.open(browser, browserTest.fileUrl(work, file));

// A screenshot of a section, when screenshots were asked for.
async function shot(page, selector, file) {
  if (shots) await browserTest.shot(page, selector, path.join(shots, file), { margin: 12 });
}

const json = (name) => JSON.parse(fs.readFileSync(path.join(work, name), "utf8"));
// The page's TF.fmt: 4 significant digits, exponents below 1e-3 and from 1e5 on.
const fmt = (v) => {
  const a = Math.abs(v);
  if (a !== 0 && (a >= 1e5 || a < 1e-3)) return v.toExponential(3).replace(/\.?0+e/, "e");
  return String(Number(v.toPrecision(4)));
};

async function runPage(browser) {
  const { page, problems } = await open(browser, "run.html");
  check("run: no console message, error or request", problems.length === 0, problems);
  check("run: the Analyses section has its link", (await page.locator('header.top nav a[href="#analyses"]').count()) === 1);
  const kinds = await page.locator("#analyses .analysis").evaluateAll((ns) => ns.map((n) => n.dataset.kind));
  check("run: six analyses, oldest first", JSON.stringify(kinds) === JSON.stringify(["explain", "explain", "explain", "attack", "attack", "robust"]), kinds);
  const notes = await page.locator("#analyses > .note").allTextContents();
  check("run: the three broken records are left out, each named", notes.length === 3 &&
    notes[0].includes("0007-explain.json") && notes[1].includes("0008-explain.json") && notes[2].includes("0009-attack.json") &&
    notes.every((n) => n.endsWith("(left out)")), notes);

  // Integrated Gradients on iris: a bar per feature, the largest |attribution| first, named.
  const ig = json("ig.json");
  const names = ["sepal length", "sepal width", "petal length", "petal width"];
  const order = ig.attributions.map((v, i) => [Math.abs(v), i]).sort((a, b) => b[0] - a[0]).map((p) => names[p[1]]);
  const bars = await page.locator("#analysis-0 .bars rect").evaluateAll((ns) => ns.map((n) => n.dataset.name));
  check("run: IG bars, the largest |attribution| first", JSON.stringify(bars) === JSON.stringify(order), bars);
  const values = await page.locator("#analysis-0 .bars .bar-value").allTextContents();
  const top = ig.attributions.map((v) => v).sort((a, b) => Math.abs(b) - Math.abs(a))[0];
  check("run: the top bar's value as --json has it", values[0] === fmt(top), [values[0], top]);
  const facts = await page.locator("#analysis-0 .kv").innerText();
  check("run: IG's completeness delta shown", facts.includes("completeness delta") && facts.includes(fmt(ig.delta)), facts);
  check("run: the deletion/insertion curves are drawn", (await page.locator('#analysis-0 [data-chart="deletion"] path.series').count()) === 2);

  // Grad-CAM on a digit: the input and the map on canvases of the input's size, and the PNG it drew.
  const canvases = await page.locator("#analysis-1 canvas").evaluateAll((ns) => ns.map((n) => [n.dataset.map, n.width, n.height]));
  check("run: grad-cam input and map, 8 x 8", JSON.stringify(canvases) === JSON.stringify([["grey", 8, 8], ["diverging", 8, 8]]), canvases);
  const img = await page.locator("#analysis-1 img").evaluate((n) => n.naturalWidth);
  check("run: grad-cam's PNG is embedded and decodes", img > 0, img);

  // DiCE: one row per counterfactual.
  const dice = json("dice.json");
  const rows = await page.locator("#analysis-2 table.data tbody tr").count();
  check("run: a row per counterfactual", rows === dice.counterfactuals.length, rows);

  // PGD: the summary as --json has it, a row per example (20 shown of 30).
  const pgd = json("pgd.json");
  const stats = await page.locator("#analysis-3 .stat .v").allTextContents();
  check("run: the attack's success rate", stats[2] === fmt(100 * pgd.summary.success_rate) + "%", stats);
  check("run: the attack's examples", stats[1] === String(pgd.examples), stats);
  check("run: the examples' table", (await page.locator("#analysis-3 table.data tbody tr").count()) === 20);
  check("run: the eps sweep's curves", (await page.locator('#analysis-4 [data-chart="eps_sweep"] path.series').count()) === 2);

  // Robust: certification, noise, what-if, risky inputs, recommendations.
  const rb = json("robust.json");
  for (const chart of ["certified", "perturb_gaussian", "whatif"])
    check(`run: robust's ${chart} chart`, (await page.locator(`#analysis-5 [data-chart="${chart}"] path.series`).count()) >= 1);
  check("run: a row per risky input", (await page.locator("#analysis-5 table.data tbody tr").count()) === rb.edge_cases.risky.length);
  check("run: every recommendation", (await page.locator("#analysis-5 ul.recs li").count()) === rb.recommendations.length);
  const certified = await page.locator("#analysis-5 .stat .v").allTextContents();
  check("run: the median certified radius", certified[2] === fmt(rb.certify.median_radius), certified);

  await shot(page, "#analysis-0", "html-report-analysis-ig.png");
  await shot(page, "#analysis-1", "html-report-analysis-cam.png");
  await shot(page, "#analysis-3", "html-report-analysis-attack.png");
  await page.close();
}

async function ownPage(browser) {
  const { page, problems } = await open(browser, "robust.html");
  check("robust.html: no console message, error or request", problems.length === 0, problems);
  check("robust.html: one analysis", (await page.locator("#analyses .analysis").count()) === 1);
  check("robust.html: its recommendations", (await page.locator("ul.recs li").count()) === json("robust.json").recommendations.length);
  await shot(page, "#analyses", "html-report-analysis-robust.png");
  await page.close();
}

(async () => {
  const browser = await browserTest.launch();
  try {
    await runPage(browser);
    await ownPage(browser);
  } catch (e) {
    fail(e);
  }
  await browser.close();
  finish("analysis pages");
})();
