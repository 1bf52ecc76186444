// The files page as a grid of thumbnails and a share of photos, as a person sees them: each
// picture's thumbnail loads (made by the server on the first request), a file that is no picture
// shows its kind, a picture named .png that is not one gives way to "No preview" instead of a
// broken image, and at 390 px the grid is two tiles across with every link in reach.

import assert from 'node:assert/strict';
import test from 'node:test';
import { TEST_TIMEOUT, assertNoProblems, openApp, uploadWithApi } from '../helpers.mjs';

/** A PNG drawn by the page's own canvas: real picture bytes, made where a person's would be. */
async function drawnPng(page, width, height, colour) {
  const base64 = await page.evaluate(
    ([w, h, c]) => {
      const canvas = document.createElement('canvas');
      canvas.width = w;
      canvas.height = h;
      const g = canvas.getContext('2d');
      g.fillStyle = c;
      g.fillRect(0, 0, w, h);
      g.fillStyle = '#ffffff';
      g.fillRect(w / 4, h / 4, w / 2, h / 2);
      return canvas.toDataURL('image/png').split(',')[1];
    },
    [width, height, colour],
  );
  return Buffer.from(base64, 'base64');
}

/** Whether every image matched by `selector` has loaded with real pixels. */
async function allLoaded(page, selector) {
  await page.waitForFunction((s) => [...document.querySelectorAll(s)].every((img) => img.complete), selector);
  return page.$$eval(selector, (images) => images.map((img) => img.naturalWidth));
}

test('the files grid and a share of photos show thumbnails, on a desktop and on a phone', { timeout: TEST_TIMEOUT }, async (t) => {
  const { server, page, browser, problems } = await openApp(t);
  const photos = [];
  for (const [name, colour] of [['sunset.png', '#d9480f'], ['lake.png', '#1c7ed6'], ['forest.png', '#2b8a3e']]) {
    photos.push(await uploadWithApi(server, name, await drawnPng(page, 1600, 1000, colour)));
  }
  const text = await uploadWithApi(server, 'packing-list.txt', 'socks\nmap\n');
  const fake = await uploadWithApi(server, 'not-really.png', 'just text');

  await page.goto('/files');
  await page.click('#view-switch a:text("Grid")');
  await page.waitForURL(/view=grid/);
  const tiles = page.locator('#files-grid li');
  assert.equal(await tiles.count(), 5);
  // Three real pictures load; the fake one's 404 turns into "No preview".
  await page.locator('#files-grid li:has-text("not-really.png") .kind').waitFor();
  const widths = await allLoaded(page, '#files-grid img');
  assert.deepEqual(widths, [320, 320, 320], 'three thumbnails, each 320 px wide (1600 x 1000 made small)');
  assert.equal(await page.locator('#files-grid li:has-text("packing-list.txt") .kind').textContent(), 'TXT');
  assert.equal(await page.locator('#files-grid li:has-text("not-really.png") .kind').textContent(), 'No preview');

  // A tile opens its file's page; sorting keeps the grid.
  await Promise.all([page.waitForURL(`**/files/${photos[0].id}`), page.click(`#files-grid li[data-id="${photos[0].id}"] a.picture`)]);
  await page.goto('/files?view=grid');
  await page.click('a[aria-current="page"]:text("Grid")');
  assert.match(page.url(), /view=grid/);

  // On a phone: two tiles across, nothing wider than the screen, each Open link visible.
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto('/files?view=grid');
  assert.ok((await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)) <= 1, 'no sideways scroll');
  const boxes = await tiles.evaluateAll((items) => items.map((li) => li.getBoundingClientRect().top));
  assert.equal(boxes[0], boxes[1], 'two tiles side by side');
  assert.notEqual(boxes[1], boxes[2]);
  for (const id of [photos[0].id, text.id, fake.id]) {
    await page.locator(`#files-grid li[data-id="${id}"] a.open`).scrollIntoViewIfNeeded();
    assert.ok(await page.locator(`#files-grid li[data-id="${id}"] a.open`).isVisible());
  }

  // A share of the photos, opened by a stranger: thumbnails, each linking to the picture full size.
  const created = await fetch(`${server.url}/api/shares`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${server.secret}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ name: 'Holiday photos', files: [...photos.map((p) => p.id), text.id] }),
  });
  assert.equal(created.status, 201);
  const share = await created.json();
  const stranger = await (await browser.newContext({ baseURL: server.url, viewport: { width: 390, height: 844 } })).newPage();
  t.after(() => stranger.context().close().catch(() => {}));
  await stranger.goto(share.url);
  assert.deepEqual(await allLoaded(stranger, 'img.thumbnail'), [320, 320, 320]);
  const full = stranger.locator('#share-files a:has(img.thumbnail)').first();
  const [response] = await Promise.all([stranger.waitForResponse(/\/preview\//), full.click()]);
  assert.equal(response.status(), 200);
  // The browser shows the picture as a document of its own; it may still be decoding it.
  await stranger.waitForURL(/\/preview\//);
  await stranger.waitForFunction(() => document.images[0]?.complete && document.images[0].naturalWidth > 0);
  assert.equal(await stranger.evaluate(() => document.images[0].naturalWidth), 1600, 'the full-size picture');

  // None of it counted as a download.
  const listed = await (await fetch(`${server.url}/api/files`, { headers: { Authorization: `Bearer ${server.secret}` } })).json();
  assert.ok(listed.every((file) => file.downloads === 0));
  assertNoProblems(problems);
});
