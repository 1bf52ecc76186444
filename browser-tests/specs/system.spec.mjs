// Journey: the owner opens the system page and sees, as pictures, how full the disk is, how
// uploads and downloads went over the last 30 days, and the largest files; each picture has its
// words for a screen reader, and /api/system gives the same figures.

import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import test from 'node:test';
import { ARTIFACTS, TEST_TIMEOUT, assertNoProblems, fetchBytes, openApp, uploadWithApi } from '../helpers.mjs';

const OUT = path.join(ARTIFACTS, 'screenshots');

test('the system page draws the disk, the last 30 days and the largest files', { timeout: TEST_TIMEOUT }, async (t) => {
  const { server, page, problems } = await openApp(t);
  const big = await uploadWithApi(server, 'holiday-video.mp4', Buffer.alloc(600_000, 1));
  const small = await uploadWithApi(server, 'invoice.pdf', Buffer.alloc(20_000, 2));
  await fetchBytes(small.url);
  await fetchBytes(small.url);

  await page.goto('/system');
  // The storage bar: its parts, each in the legend with its size, and the whole said in words.
  const bar = page.locator('#storage-bar');
  assert.equal(await bar.getAttribute('role'), 'img');
  assert.match(await page.textContent('#storage-bar-title'), /^A disk of .+: files .+, reclaimable .+, other data on the disk .+, reserve \(kept free\) .+, free for uploads .+\.$/);
  const parts = await page.$$eval('#storage .legend li', (items) => items.map((item) => item.dataset.part));
  assert.deepEqual(parts, ['files', 'reclaimable', 'other', 'reserve', 'free']);
  const filesPart = await page.locator('#storage-bar rect.part-files').boundingBox();
  assert.ok(filesPart && filesPart.width > 0, 'the files show in the bar');

  // Today's bars stand up; the other 29 days are flat.
  for (const id of ['activity-counts', 'activity-bytes']) {
    const heights = await page.$$eval(`#${id} rect.uploads`, (rects) => rects.map((rect) => Number(rect.getAttribute('height'))));
    assert.equal(heights.length, 30);
    assert.ok(heights[29] > 0, `${id}: today has uploads`);
    assert.ok(heights.slice(0, 29).every((height) => height === 0), `${id}: no uploads before today`);
    const downloads = await page.$$eval(`#${id} rect.downloads`, (rects) => rects.map((rect) => Number(rect.getAttribute('height'))));
    assert.ok(downloads[29] > 0, `${id}: today has downloads`);
  }
  assert.match(await page.textContent('#activity-counts-title'), /Over the last 30 days, 2 uploaded and 2 downloaded/);
  // The figures as a table, for whoever would rather read them.
  await page.click('#activity summary');
  const today = await page.$$eval('#activity-table tbody tr:first-child td', (cells) => cells.map((cell) => cell.textContent.trim()));
  assert.deepEqual(today.slice(1), ['2', '605.5 KiB', '2', '39.1 KiB']);

  const largest = await page.$$eval('#largest-files li a', (links) => links.map((link) => link.textContent));
  assert.deepEqual(largest, ['holiday-video.mp4', 'invoice.pdf']);

  // The JSON answers the same.
  const json = await (await fetch(`${server.url}/api/system`, { headers: { Authorization: `Bearer ${server.secret}` } })).json();
  assert.equal(json.activity.length, 30);
  assert.equal(json.activity[29].date, today[0]);
  assert.deepEqual([json.activity[29].uploads, json.activity[29].downloads], [2, 2]);
  assert.deepEqual(json.largest_files.map((file) => file.id), [big.id, small.id]);

  await mkdir(OUT, { recursive: true });
  for (const viewport of [{ width: 1280, height: 800 }, { width: 390, height: 844 }]) {
    await page.setViewportSize(viewport);
    for (const colorScheme of ['light', 'dark']) {
      await page.emulateMedia({ colorScheme });
      await page.screenshot({ path: path.join(OUT, `system-charts-${viewport.width}-${colorScheme}.png`), fullPage: true, animations: 'disabled' });
    }
    const wider = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(wider <= 1, `the system page fits ${viewport.width} px (${wider} px wider)`);
  }
  assertNoProblems(problems);
});
