// What every page test in a real browser shares (Debian's Chromium through playwright-core): the
// checks and their tally, headless Chromium, a page opened with everything that must not happen
// recorded (console messages, page errors, dialogs, requests to anything but the page itself),
// and screenshots of one section. The tests: report_page_test.js, attention_page_test.js,
// analysis_page_test.js and live_page_test.js, each run by its .sh.
"use strict";
const path = require("path");
const { chromium } = require("playwright-core");

// check(name, ok, detail) counts; finish(label) prints the tally and exits 1 when any failed.
function checks() {
  let passed = 0;
  let failed = 0;
  return {
    check(name, ok, detail) {
      if (ok) passed++;
      else {
        failed++;
        console.log("FAIL: " + name + (detail !== undefined ? " (got " + JSON.stringify(detail) + ")" : ""));
      }
    },
    fail(error) {
      failed++;
      console.log("FAIL: " + (error && error.stack ? error.stack : String(error)));
    },
    finish(label) {
      console.log(`${label}: ${passed} passed, ${failed} failed`);
      process.exit(failed ? 1 : 0);
    },
  };
}

function launch() {
  return chromium.launch({ executablePath: "/usr/bin/chromium", args: ["--headless", "--no-sandbox", "--disable-gpu"] });
}

// Opens `url` in a new page and waits for its load event. `problems` collects what a page must
// never do; a request is allowed when `allowed(requestUrl)` says so (default: the page's own URL
// and data: URLs). Returns { page, problems }.
async function open(browser, url, { width = 1280, height = 900, allowed } = {}) {
  const page = await browser.newPage({ viewport: { width, height } });
  const problems = [];
  const ok = allowed || ((u) => u === url || u.startsWith("data:"));
  page.on("console", (m) => problems.push("console " + m.type() + ": " + m.text()));
  page.on("pageerror", (e) => problems.push("page error: " + e.message));
  page.on("dialog", (d) => {
    problems.push("dialog: " + d.message());
    d.dismiss();
  });
  page.on("request", (r) => {
    if (!ok(r.url())) problems.push("request: " + r.url());
  });
  await page.goto(url);
  await page.waitForLoadState("load");
  return { page, problems };
}

// The file:// URL of `file` in directory `dir`.
const fileUrl = (dir, file) => "file://" + path.resolve(dir, file);

// A screenshot of the element `selector`, in page coordinates (a sticky header stays at the page's
// top), `margin` pixels around it horizontally (null: the page's whole width), at most `maxHeight`.
async function shot(page, selector, file, { margin = null, maxHeight = 1100 } = {}) {
  await page.evaluate(() => window.scrollTo(0, 0));
  const width = page.viewportSize().width;
  const r = await page.locator(selector).evaluate((n) => {
    const b = n.getBoundingClientRect();
    return { x: b.left, y: b.top + window.scrollY, height: b.height };
  });
  const x = margin === null ? 0 : Math.max(0, r.x - margin);
  await page.screenshot({ path: file, fullPage: true,
    clip: { x, y: r.y - 8, width: width - 2 * x, height: Math.min(r.height + 16, maxHeight) } });
}

module.exports = { checks, launch, open, fileUrl, shot };
