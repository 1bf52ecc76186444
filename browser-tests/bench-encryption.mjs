// The page's end-to-end encryption measured against the page without it, for scripts/bench
// (scenario `encrypted_page`): in headless Chromium, the upload page sends the same file plain and
// with "Encrypt in this browser", and the file is downloaded plain (the browser saves /f/ID) and
// decrypted (the /e/ID#KEY page saves it), in turns, the order switched every run. Each figure is
// the wall time from the click to the upload's "Done" or the saved file, and the peak of the page's
// JavaScript heap sampled meanwhile (CDP Performance.getMetrics, every 100 ms).
//
// Usage: node bench-encryption.mjs URL SECRET FILE RUNS   (prints one JSON object)

import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { launchBrowser } from './helpers.mjs';

const [url, secret, file, runsArgument] = process.argv.slice(2);
const runs = Number(runsArgument);
const MIB = 1024 * 1024;
const TIMEOUT = 30 * 60 * 1000;

async function digest(path) {
  const hash = createHash('sha256');
  for await (const piece of createReadStream(path)) hash.update(piece);
  return hash.digest('hex');
}

/** Runs `work` while sampling the page's JavaScript heap; returns its seconds and the peak in MiB. */
async function measured(page, work) {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Performance.enable');
  let peak = 0;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      const { metrics } = await cdp.send('Performance.getMetrics').catch(() => ({ metrics: [] }));
      const heap = metrics.find((metric) => metric.name === 'JSHeapUsedSize');
      if (heap) peak = Math.max(peak, heap.value);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  })();
  const started = performance.now();
  let result;
  try {
    result = await work();
  } finally {
    sampling = false;
    await sampler;
    await cdp.detach().catch(() => {});
  }
  return { seconds: (performance.now() - started) / 1000, heap: peak / MIB, result };
}

async function upload(context, encrypted) {
  const page = await context.newPage();
  await page.goto('/');
  if (encrypted) await page.check('#encrypt');
  const { seconds, heap, result } = await measured(page, async () => {
    await page.setInputFiles('#file-input', file);
    await page.waitForFunction(
      () => ['done', 'failed', 'cancelled'].includes(document.querySelector('#uploads li.upload')?.dataset.state),
      null,
      { timeout: TIMEOUT, polling: 50 },
    );
    return page.$eval('#uploads li.upload', (row) => ({
      state: row.dataset.state,
      status: row.querySelector('.upload-status')?.textContent,
      link: row.querySelector('a.upload-link')?.href,
    }));
  });
  await page.close();
  if (result.state !== 'done') throw new Error(`the ${encrypted ? 'encrypted' : 'plain'} upload ended: ${result.status}`);
  return { seconds, heap, link: result.link };
}

async function download(context, link, encrypted) {
  const page = await context.newPage();
  if (encrypted) await page.goto(link);
  else await page.goto('/');
  const { seconds, heap, result } = await measured(page, async () => {
    const saved = page.waitForEvent('download', { timeout: TIMEOUT });
    if (encrypted) await page.click('#decrypt');
    else await page.evaluate((href) => {
      const anchor = Object.assign(document.createElement('a'), { href, download: '' });
      document.body.append(anchor);
      anchor.click();
    }, link);
    const done = await saved;
    return done.path();
  });
  const bytes = await digest(result);
  await page.close();
  return { seconds, heap, bytes };
}

const size = (await stat(file)).size / MIB;
const expected = await digest(file);
const browser = await launchBrowser();
const context = await browser.newContext({ baseURL: url, acceptDownloads: true });
const signIn = await context.newPage();
await signIn.goto('/login');
await signIn.fill('#secret', secret);
await Promise.all([signIn.waitForURL(`${url}/`), signIn.click('#login-form [type=submit]')]);
await signIn.close();

const figures = { put: [], put_enc: [], get: [], get_enc: [], heap_put: [], heap_put_enc: [], heap_get: [], heap_get_enc: [] };
for (let run = 0; run < runs; run += 1) {
  const order = run % 2 === 0 ? [false, true] : [true, false];
  const links = {};
  for (const encrypted of order) {
    const { seconds, heap, link } = await upload(context, encrypted);
    const key = encrypted ? 'put_enc' : 'put';
    figures[key].push(size / seconds);
    figures[`heap_${key}`].push(heap);
    links[encrypted] = encrypted ? link : link.replace(/\/f\/([^/?#]+).*/, '/f/$1');
  }
  for (const encrypted of order) {
    const { seconds, heap, bytes } = await download(context, links[encrypted], encrypted);
    if (bytes !== expected) throw new Error(`the ${encrypted ? 'decrypted' : 'plain'} download came back with other bytes`);
    const key = encrypted ? 'get_enc' : 'get';
    figures[key].push(size / seconds);
    figures[`heap_${key}`].push(heap);
  }
}
await browser.close();
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
console.log(JSON.stringify(Object.fromEntries(Object.entries(figures).map(([key, values]) => [key, median(values)]))));
