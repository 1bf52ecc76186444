// Journey: someone with the link downloads the file through the browser and gets the same bytes.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import test from 'node:test';
import { TEST_TIMEOUT, assertNoProblems, idOf, openApp, sha256, waitForUploads } from '../helpers.mjs';

test('a file uploaded in the browser downloads with ?download=1 with the same SHA-256', { timeout: TEST_TIMEOUT }, async (t) => {
  const { page, problems } = await openApp(t);
  const original = randomBytes(2 * 1024 * 1024 + 4321);
  await page.setInputFiles('#file-input', { name: 'report 2024 (final).bin', mimeType: 'application/octet-stream', buffer: original });
  const [row] = await waitForUploads(page, 1);
  assert.equal(row.status, 'Done');
  const id = idOf(row.link);

  // The file page shows the same SHA-256 the server computed while storing.
  await page.goto(`/files/${id}`);
  assert.equal((await page.textContent('#sha256')).trim(), sha256(original));

  // The file page's own Download button, as a user would click it.
  const link = page.locator('main a[href$="?download=1"]');
  assert.equal(await link.count(), 1, 'the file page has one download link');
  const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);
  assert.equal(download.suggestedFilename(), 'report 2024 (final).bin');
  const saved = await download.path();
  assert.ok(saved, `download finished: ${await download.failure()}`);
  assert.equal(sha256(await readFile(saved)), sha256(original));

  // The download is counted and shows in the history.
  await page.goto(`/files/${id}`);
  assert.ok((await page.locator('#download-history tbody tr').count()) >= 1, 'the download is in the history');

  assertNoProblems(problems);
});
