// Imports a profile file into speedscope's own web app (the npm package's dist/release),
// served from 127.0.0.1 and opened in headless Chromium through #profileURL, and checks that
// it loads without an error and that the sandwich view (a DOM table of frames by self time)
// lists HOT_FRAME first. Usage: node view_speedscope.js FILE HOT_FRAME
'use strict';
const fs = require('fs');
const http = require('http');
const path = require('path');
const { launch } = require('./browser');

const release = path.join(path.dirname(require.resolve('speedscope/package.json')), 'dist',
                          'release');
const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css',
                '.wasm': 'application/wasm', '.json': 'application/json', '.png': 'image/png' };

function serve(profile) {
  const server = http.createServer((req, res) => {
    const url = decodeURIComponent(req.url.split('?')[0].split('#')[0]);
    const file = url === '/profile' ? profile
                                     : path.join(release, url === '/' ? 'index.html' : url);
    if (!file.startsWith(release) && file !== profile) { res.writeHead(403); res.end(); return; }
    fs.readFile(file, (err, data) => {
      if (err) { res.writeHead(404); res.end(); return; }
      res.writeHead(200, { 'Content-Type': TYPES[path.extname(file)] || 'application/octet-stream' });
      res.end(data);
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

async function main() {
  const [file, hot] = process.argv.slice(2);
  const server = await serve(path.resolve(file));
  const port = server.address().port;
  const browser = await launch();
  try {
    const page = await browser.newPage();
    const problems = [];
    page.on('pageerror', (e) => problems.push('page error: ' + e));
    page.on('dialog', async (d) => { problems.push('dialog: ' + d.message()); await d.dismiss(); });
    await page.setViewport({ width: 1200, height: 800 });
    const name = path.basename(file);
    await page.goto(`http://127.0.0.1:${port}/#profileURL=` +
                    encodeURIComponent(`http://127.0.0.1:${port}/profile`) + '&title=' +
                    encodeURIComponent(name), { waitUntil: 'networkidle0' });
    // Loaded: the toolbar shows the views; 3 switches to the sandwich view's table.
    // An import error shows as an alert (a dialog) or a page error: stop waiting at once.
    for (let t = 0; ; t += 100) {
      if (problems.length) throw new Error(problems.join('; '));
      if (await page.evaluate(() => document.body.innerText.includes('Sandwich'))) break;
      if (t > 20000) throw new Error('speedscope did not show the profile within 20 s');
      await new Promise((r) => setTimeout(r, 100));
    }
    await page.keyboard.press('3');
    await page.waitForFunction(() => document.querySelectorAll('table tr').length > 1,
                               { timeout: 20000 });
    const rows = await page.evaluate(() =>
        [...document.querySelectorAll('table tr')].filter((tr) => tr.querySelector('td'))
            .map((tr) => tr.innerText.replace(/\s+/g, ' ')));
    if (problems.length) throw new Error(problems.join('; '));
    const top = rows.find((r) => r.trim().length) || '';
    if (!top.includes(hot)) throw new Error(`top frame by self time is '${top}', not ${hot}`);
    console.log(`speedscope app: ${name} imported, ${rows.length} frames, top by self time: ${hot}`);
  } finally {
    await browser.close();
    server.close();
  }
}

main().catch((e) => { console.log('speedscope app: FAILED: ' + e.message); process.exit(1); });
