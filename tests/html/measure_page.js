// Loads an HTML report in headless Chromium N times and prints its size and the median time to
// its load event (the page's scripts build every section before it): the numbers of
// docs/performance.md. A measurement, not a test (machines are noisy).
//
//   NODE_PATH=tests/npm/node_modules node tests/html/measure_page.js PAGE.html [N]
"use strict";
const path = require("path");
const fs = require("fs");
const { chromium } = require("playwright-core");

(async () => {
  const file = path.resolve(process.argv[2]);
  const runs = Number(process.argv[3] || 5);
  const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: ["--headless", "--no-sandbox", "--disable-gpu"] });
  const times = [];
  for (let i = 0; i < runs; i++) {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto("file://" + file);
    await page.waitForLoadState("load");
    times.push(await page.evaluate(() => performance.getEntriesByType("navigation")[0].loadEventEnd));
    await page.close();
  }
  await browser.close();
  times.sort((a, b) => a - b);
  const kb = Math.round(fs.statSync(file).size / 1024);
  console.log(`${path.basename(file)}: ${kb} KB, load event after ${Math.round(times[runs >> 1])} ms (median of ${runs}; ` +
    `min ${Math.round(times[0])}, max ${Math.round(times[runs - 1])})`);
})();
