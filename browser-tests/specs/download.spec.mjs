// Journey: someone with the link downloads the file through the browser and gets the same bytes.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import test from 'node:test';
import { TEST_TIMEOUT, assertNoProblems, idOf, openApp, sha256, waitForUploads } from '../helpers.mjs';

test('a file uploaded in the browser downloads with ?download=1 with the same SHA-256', { timeout: TEST_TIMEOUT }, async (t) => {
  const { server, page, problems } = await openApp(t);
  const original = randomBytes(2 * 1024 * 1024 + 4321);
  await page.setInputFiles('#file-input', { name: 'report 2024 (final).bin', mimeType: 'application/octet-stream', buffer: original });
  const [row] = await waitForUploads(page, 1);
  assert.equal(row.status, 'Done');
  const id = idOf(row.link);

  // The file page shows the same SHA-256 the server computed while storing.
  await page.goto(`/files/${id}`);
  assert.equal((await page.textContent('#sha256')).trim(), sha256(original));

  // Prefer the page's own download link; a page without one still gets a real click on a link.
  let link = page.locator('main a[href*="download=1"]').first();
  if ((await link.count()) === 0) {
    await page.evaluate((href) => {
      const a = document.createElement('a');
      a.href = href;
      a.id = 'test-download';
      a.textContent = 'download';
      document.querySelector('main').append(a);
    }, `${row.link}?download=1`);
    link = page.locator('#test-download');
  }
  const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);
  assert.equal(download.suggestedFilename(), 'report 2024 (final).bin');
  const saved = await download.path();
  assert.ok(saved, `download finished: ${await download.failure()}`);
  assert.equal(sha256(await readFile(saved)), sha256(original));

  // The download is counted and shows in the history.
  await page.goto(`/files/${id}`);
  assert.ok((await page.locator('#download-history tbody tr').count()) >= 1, 'the download is in the history');

  assertNoProblems(problems);
  void server;
});
