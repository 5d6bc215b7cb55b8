// The attention page of `tfdebug explain --model demo --attention-html` in a real browser:
// Debian's Chromium, headless, driven by playwright-core (tests/npm). Run by
// tests/interpret/attention_explain_test.sh, which writes WORK_DIR/attention.html and the same
// run's JSON, WORK_DIR/out.json:
//
//   node attention_page_test.js WORK_DIR [SCREENSHOT_DIR]
//
// The page must load with no console message, no page error and no request but itself; its
// lines and cells must carry the JSON's tokens and weights; the head toggles, the layer choice
// and a model-view click must change what is drawn.
"use strict";
const path = require("path");
const fs = require("fs");
const browserTest = require("./browser");

const work = process.argv[2];
const shots = process.argv[3];
const { check, finish } = browserTest.checks();

(async () => {
  const json = JSON.parse(fs.readFileSync(path.join(work, "out.json"), "utf8"));
  const n = json.tokens.length;
  const H = json.heads;
  const browser = await browserTest.launch();
  const url = browserTest.fileUrl(work, "attention.html");
  const { page, problems } = await browserTest.open(browser, url, { width: 1100, allowed: (u) => u === url });

  // Layer 0, every head: one line per weight >= 0.01, each with the JSON's weight (6 digits).
  const expected = [];
  for (let h = 0; h < H; h++)
    for (let i = 0; i < n; i++)
      for (let j = 0; j < n; j++) if (json.attention[0][h][i][j] >= 0.01) expected.push([h, i, j, json.attention[0][h][i][j]]);
  const lines = await page.$$eval("#head-svg line.attn", (ls) =>
    ls.map((l) => [Number(l.dataset.head), Number(l.dataset.query), Number(l.dataset.key), Number(l.dataset.weight), l.dataset.layer]));
  check("layer 0: one line per weight of at least 0.01", lines.length === expected.length, [lines.length, expected.length]);
  const byKey = new Map(lines.map((l) => [l[0] + "," + l[1] + "," + l[2], l]));
  let wrong = 0;
  for (const [h, i, j, w] of expected) {
    const l = byKey.get(h + "," + i + "," + j);
    if (!l || Math.abs(l[3] - w) > 1e-5 * Math.max(1, w) || l[4] !== "0") wrong++;
  }
  check("layer 0: every line joins the right tokens with the JSON's weight", wrong === 0, wrong);
  const tokens = await page.$$eval("#head-svg text.query", (ts) => ts.map((t) => t.textContent));
  check("the query tokens are the input", JSON.stringify(tokens) === JSON.stringify(json.tokens.map(String)), tokens);
  const lineOpacity = await page.$eval("#head-svg line.attn", (l) => Number(l.getAttribute("stroke-opacity")) === Number(l.dataset.weight));
  check("a line's opacity is its weight", lineOpacity);

  // Head toggle: unchecking head 1 removes exactly its lines.
  const head1 = expected.filter((e) => e[0] === 1).length;
  await page.click('input[data-head="1"]');
  const after = await page.$$eval("#head-svg line.attn", (ls) => ls.map((l) => l.dataset.head));
  check("unchecking head 1 removes its lines", after.length === expected.length - head1 && !after.includes("1"), [after.length, expected.length, head1]);
  await page.click('input[data-head="1"]');
  check("checking it again brings them back", (await page.locator("#head-svg line.attn").count()) === expected.length);

  // Layer choice: layer 1's lines.
  await page.selectOption("#layer", "1");
  const layer1 = await page.$$eval("#head-svg line.attn", (ls) => ls.map((l) => l.dataset.layer));
  let count1 = 0;
  for (let h = 0; h < H; h++) for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) if (json.attention[1][h][i][j] >= 0.01) count1++;
  check("layer 1 shows layer 1's lines", layer1.length === count1 && layer1.every((l) => l === "1"), [layer1.length, count1]);

  // Model view: layers x heads cells of n x n rects with the weights.
  const cells = await page.locator("#model-view .cell").count();
  check("the model view has a cell per layer and head", cells === json.layers.length * H, cells);
  const w = await page.$eval('#model-view .cell[data-layer="1"][data-head="2"] rect[data-query="6"][data-key="4"]', (r) => Number(r.dataset.weight));
  check("a model-view cell holds the JSON's weight", Math.abs(w - json.attention[1][2][6][4]) < 1e-5, [w, json.attention[1][2][6][4]]);
  await page.click('#model-view .cell[data-layer="0"][data-head="3"]');
  const clicked = await page.$$eval("#head-svg line.attn", (ls) => [...new Set(ls.map((l) => l.dataset.layer + ":" + l.dataset.head))]);
  check("clicking a cell shows that layer and head alone", JSON.stringify(clicked) === JSON.stringify(["0:3"]), clicked);

  // Pointing at a query token leaves only its lines.
  await page.hover('#head-svg text.query[data-token="6"]');
  const focused = await page.$$eval("#head-svg line.attn", (ls) => [...new Set(ls.filter((l) => l.style.display !== "none").map((l) => l.dataset.query))]);
  check("pointing at a token shows only its lines", JSON.stringify(focused) === JSON.stringify(["6"]), focused);
  await page.mouse.move(1000, 10);

  if (shots) {
    await page.selectOption("#layer", "1");
    for (let h = 0; h < H; h++) {
      const box = page.locator(`input[data-head="${h}"]`);
      if (!(await box.isChecked())) await box.click();
    }
    await page.screenshot({ path: path.join(shots, "attention-view.png"), fullPage: true });
  }
  check("no console message, page error or request", problems.length === 0, problems);
  await browser.close();
  finish("attention page");
})().catch((e) => {
  console.log("FAIL: " + e.stack);
  process.exit(1);
});
