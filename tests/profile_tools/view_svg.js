// Opens an rbt flamegraph SVG in headless Chromium and checks what a user would see: it
// renders frames, its search highlights the frames matching TERM (counted through the page and
// on a screenshot's pixels) and click-to-zoom widens a frame to the full width.
// Usage: node view_svg.js FILE.svg TERM
'use strict';
const path = require('path');
const { launch, decodePng, countPixels } = require('./browser');

const HIGHLIGHT = [224, 64, 224];

async function main() {
  const [file, term] = process.argv.slice(2);
  const browser = await launch();
  try {
    const page = await browser.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.setViewport({ width: 1220, height: 900 });
    await page.goto('file://' + path.resolve(file), { waitUntil: 'load' });
    const frames = await page.evaluate(() => document.querySelectorAll('g.f').length);
    if (frames < 2) throw new Error(`only ${frames} frames drawn`);
    const before = countPixels(decodePng(await page.screenshot({ fullPage: true })), HIGHLIGHT);
    const hits = await page.evaluate((t) => window.rbtSearch(t), term);
    const shown = await page.evaluate(() =>
        [...document.querySelectorAll('g.f:not(.hide) rect')]
            .filter((r) => r.getAttribute('fill') === 'rgb(224,64,224)').length);
    const matched = await page.evaluate(() => document.getElementById('matched').textContent);
    const after = countPixels(decodePng(await page.screenshot({ fullPage: true })), HIGHLIGHT);
    if (!(hits > 0 && shown === hits)) throw new Error(`search '${term}' highlighted ${hits} frames`);
    if (!(after > before + 100)) throw new Error(`highlight not visible: ${before} -> ${after} px`);
    // Zoom into the first match: it then spans the whole width.
    const width = await page.evaluate((t) => {
      const g = [...document.querySelectorAll('g.f')].find(
          (g) => new RegExp(t, 'i').test(g.querySelector('title').textContent.split('\n')[0]));
      g.dispatchEvent(new MouseEvent('click', { bubbles: true }));
      return +g.querySelector('rect').getAttribute('width');
    }, term);
    if (width < 1100) throw new Error(`zoomed frame is ${width} px wide`);
    if (errors.length) throw new Error('page errors: ' + errors.join('; '));
    console.log(`svg: ${frames} frames, search '${term}' highlighted ${hits} (${matched}), ` +
                `${after - before} px, zoom ok`);
  } finally {
    await browser.close();
  }
}

main().catch((e) => { console.log('svg: FAILED: ' + e.message); process.exit(1); });
