// The live dashboard in a real browser: Debian's Chromium, headless, driven by playwright-core
// (tests/npm), on the page of `tfdebug demo --fault log --serve` while it trains. Run by
// tests/html/live_dashboard_test.sh:
//
//   node live_page_test.js URL [SCREENSHOT_DIR]
//
// The page must load with no console message, no page error and no request beyond its own
// origin; the loss chart must grow while the run trains; the NaN finding (aten::log in
// blocks.1.mlp) must appear within a second of the step that produced it (the page then knows
// no step more than a second's worth of steps later); the flight recorder's window must follow
// the first error, and the model graph the end of the run. With SCREENSHOT_DIR, the
// screenshots of docs/dashboard.md are written there.
"use strict";
const browserTest = require("./browser");

const url = process.argv[2];
const shots = process.argv[3];
const origin = new URL(url).origin;
const { check, finish } = browserTest.checks();

// Points of the loss chart: a circle per finite step, a band per NaN step.
const lossPoints = (page) => page.locator('[data-chart="loss"] circle, [data-chart="loss"] .nan-gap').count();

async function main() {
  const browser = await browserTest.launch();
  try {
    // The page and its event stream come from the dashboard itself; nothing from anywhere else.
    const { page, problems } = await browserTest.open(browser, url, { allowed: (u) => new URL(u).origin === origin });
    // When each event reached the page, and when the NaN finding was first on screen.
    await page.waitForFunction(() => TF.liveSource && TF.data && TF.data.run, null, { timeout: 30000 });
    await page.evaluate(() => {
      window.arrived = {};
      TF.liveSource.addEventListener("message", (m) => {
        const ev = JSON.parse(m.data);
        if (ev.kind === "step") window.arrived[ev.step] = performance.now();
        if (ev.kind === "finding") window.arrived[ev.finding.op] = performance.now();
      });
      // Each redraw replaces the page's sections: the first one that lists the finding.
      new MutationObserver(() => {
        if (window.shown) return;
        const on = Array.from(document.querySelectorAll("ul.findings li")).some((li) => li.textContent.includes("aten::log"));
        if (on) window.shown = performance.now();
      }).observe(document.body, { childList: true, subtree: true });
    });
    const early = await page.evaluate(() => ({ step: TF.data.run.last_step, nan: TF.data.findings.some((f) => f.op === "aten::log") }));
    check("the page opened before the NaN step (else slow the demo: --step-delay-ms)", !early.nan, early);

    // The run is training: the loss chart has points, and a second later it has more.
    await page.waitForFunction(() => document.querySelectorAll('[data-chart="loss"] circle').length >= 2, null, { timeout: 30000 });
    const running = await page.locator("#run-status").getAttribute("data-state");
    check("the page says it is live while the run trains", running === "live", running);
    const before = await lossPoints(page);
    await page.waitForTimeout(1000);
    const after = await lossPoints(page);
    check("the loss chart grows while the run trains", after > before, [before, after]);

    // The NaN finding appears while the run is near the step that produced it.
    const steps = await page.evaluate(() => TF.data.live.max_steps);
    await page.waitForFunction(() => window.shown !== undefined, null, { timeout: 60000 });
    // The finding goes out at once, its step's metrics with the next flush of the stream (up to
    // DashboardOptions::flush_interval later): the page may show the finding first.
    await page.waitForFunction(() => {
      const f = TF.data.findings.find((x) => x.op === "aten::log");
      return f !== undefined && window.arrived[f.step] !== undefined;
    }, null, { timeout: 10000 }).catch(() => {});
    const seen = await page.evaluate(() => {
      const f = TF.data.findings.find((x) => x.op === "aten::log");
      return { step: f.step, severity: f.severity, module: f.module, kept: TF.data.metrics.steps.length,
        finding: window.arrived["aten::log"], stepEnd: window.arrived[f.step], next: window.arrived[f.step + 1], shown: window.shown };
    });
    check("the NaN finding names blocks.1.mlp / aten::log as an error", seen.severity === "error" && seen.module === "blocks.1.mlp", seen);
    const text = await page.locator("ul.findings li", { hasText: "aten::log" }).first().textContent();
    check("the finding shows its step, phase and suggestion", text.includes("step " + seen.step) && text.includes("forward") && /try|clamp|check/i.test(text), text);
    // The Session sends a step's findings before its metrics: the finding came before the next
    // step's, and was on screen within a second of the step's metrics reaching the page.
    check("the finding came live, before the next step", seen.finding !== undefined && (seen.next === undefined || seen.finding < seen.next), seen);
    check("the finding was on screen within a second of its step", seen.stepEnd !== undefined && seen.shown - seen.stepEnd < 1000, seen);
    console.log("live_page_test: finding on screen " + Math.round(seen.shown - seen.finding) + " ms after its event, " +
      Math.round(seen.shown - seen.stepEnd) + " ms after its step's metrics");
    check("the page keeps at most max_steps steps", steps >= 1 && seen.kept <= steps, [steps, seen.kept]);

    // The flight recorder's window around the first error, once the Session wrote it.
    await page.waitForSelector("section#flight .op.producer", { timeout: 30000 });
    const producer = await page.locator("section#flight .op.producer").textContent();
    check("the flight recorder names the producing op", producer.includes("blocks.1.mlp / aten::log") && producer.includes("from finite inputs"), producer);
    const nanBand = await page.locator('[data-chart="loss"] .nan-label').count();
    check("the loss chart marks the NaN steps", nanBand === 1, nanBand);
    if (shots) {
      await page.evaluate(() => window.scrollTo(0, 0));
      await page.screenshot({ path: shots + "/dashboard-live.png" });
      await page.locator("section#metrics").screenshot({ path: shots + "/dashboard-loss.png" });
    }

    // The end of the run: complete, with the trained model's graph.
    await page.waitForFunction(() => TF.data.run.complete === true, null, { timeout: 60000 });
    await page.waitForSelector("section#graph", { timeout: 30000 });
    await page.waitForTimeout(400);
    const status = await page.locator("#run-status .stat .v").first().textContent();
    check("the page says the run is complete at its end", status === "complete", status);
    const points = await lossPoints(page);
    const total = await page.evaluate(() => TF.data.metrics.steps.length);
    check("every step is in the data at the end", total === 120, total);
    check("the loss chart has a point or a NaN band per step", points === 120, points);
    check("no console message, page error or foreign request", problems.length === 0, problems);
  } finally {
    await browser.close();
  }
  finish("live_page_test");
}

main().catch((e) => {
  console.log("FAIL: " + e.message);
  process.exit(1);
});
