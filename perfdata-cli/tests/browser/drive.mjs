// Opens perfdata's viewer outputs in the real clients, in headless Chromium (the system's,
// driven by puppeteer-core), and prints what they show as JSON on stdout. Run by
// perfdata-cli/tests/integration/browser.rs, which compares it with `perfdata report`.
//
//   node drive.mjs '{"dir": D, "chromium": PATH, "speedscope": F, "svg": F,
//                    "searches": ["^count_words$", ...], "shots": DIR}'
//
// Without "svg", the flame graph is not opened; "shot" names speedscope's screenshot.
//
// A static server on 127.0.0.1 (an ephemeral port) serves speedscope's release build (the
// npm package's dist/release, as /speedscope/) and the files of D (as /files/); it stops
// before this script exits. Chromium starts with a new empty profile and the flags that keep
// it from reaching beyond the loopback.
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import puppeteer from 'puppeteer-core';

const args = JSON.parse(process.argv[2]);
const here = path.dirname(fileURLToPath(import.meta.url));
const roots = {
  speedscope: path.join(here, 'node_modules', 'speedscope', 'dist', 'release'),
  files: args.dir,
};
const types = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css',
  '.json': 'application/json', '.svg': 'image/svg+xml', '.wasm': 'application/wasm' };

const server = http.createServer((req, res) => {
  const url = new URL(req.url, 'http://127.0.0.1');
  const [, top, ...rest] = decodeURIComponent(url.pathname).split('/');
  const root = roots[top];
  const file = root && path.resolve(root, rest.join('/'));
  if (!file || !file.startsWith(path.resolve(root) + path.sep)) {
    res.writeHead(404).end();
    return;
  }
  fs.readFile(file, (err, data) => {
    if (err) {
      res.writeHead(404).end();
    } else {
      res.writeHead(200, { 'content-type': types[path.extname(file)] ?? 'application/octet-stream' });
      res.end(data);
    }
  });
});
await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
const base = `http://127.0.0.1:${server.address().port}`;

const browser = await puppeteer.launch({
  executablePath: args.chromium,
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
const out = {};
try {
  const page = await browser.newPage();
  await page.setViewport({ width: 1400, height: 900 });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));

  // speedscope: the profile loaded by URL, in the Sandwich view (sorted by Self).
  const profile = `${base}/files/${args.speedscope}`;
  await page.goto(`${base}/speedscope/index.html#profileURL=${encodeURIComponent(profile)}&view=sandwich`);
  await page.waitForFunction(() => document.querySelectorAll('tr td').length > 0,
    { timeout: 60000 });
  out.speedscope = await page.evaluate(() => ({
    // The toolbar's middle: the profile's name and its index among the file's profiles.
    toolbar: document.body.innerText.split('\n').slice(0, 4),
    rows: [...document.querySelectorAll('tr')]
      .map((tr) => [...tr.querySelectorAll('td')].map((td) => td.innerText.trim()))
      .filter((cells) => cells.length === 3),
  }));
  await page.screenshot({ path: path.join(args.shots, args.shot ?? 'speedscope-sandwich.png') });
  out.speedscope.errors = errors.splice(0);

  // The flame graph SVG (inferno's): it renders, and its own search finds each term.
  if (args.svg) {
    await page.goto(`${base}/files/${args.svg}`);
    await page.waitForFunction(() => typeof search === 'function' && frames && frames.children.length > 0,
      { timeout: 60000 });
    out.svg = await page.evaluate((terms) => {
      // Drawn: the widest frame (the root, `all`) spans the graph.
      const widths = [...document.querySelectorAll('#frames rect')].map((r) => r.getBBox().width);
      const shown = { frames: frames.children.length, widest: Math.max(0, ...widths),
        width: document.documentElement.getBBox().width, searches: [] };
      for (const term of terms) {
        search(term);
        const text = document.getElementById('matched').textContent;
        reset_search();
        shown.searches.push({ term, matched: text });
      }
      return shown;
    }, args.searches);
    await page.evaluate((t) => search(t), args.searches[0]);
    await page.screenshot({ path: path.join(args.shots, 'flamegraph-search.png') });
    out.svg.errors = errors.splice(0);
  }
} finally {
  await browser.close();
  server.close();
}
process.stdout.write(JSON.stringify(out) + '\n');
