// Journey: the owner uploads a large file, the page is reloaded mid-way, the same file is chosen
// again, and the upload continues where it stopped (tus) instead of starting over.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'node:test';
import { SECRET, TEST_TIMEOUT, fetchBytes, openApp, sha256, waitForUploads } from '../helpers.mjs';

const MIB = 1024 * 1024;

async function system(server) {
  const response = await fetch(`${server.url}/api/system`, { headers: { Authorization: `Bearer ${SECRET}` } });
  return response.json();
}

test('a file chosen again after a reload resumes where its upload stopped', { timeout: TEST_TIMEOUT }, async (t) => {
  const { server, page } = await openApp(t);
  // A file on disk, so that choosing it again gives the same name, size and modification time
  // (the fingerprint tus-js-client finds the earlier upload by).
  const folder = await mkdtemp(path.join(tmpdir(), 'blobdrop-resume-'));
  t.after(() => rm(folder, { recursive: true, force: true }));
  const bytes = randomBytes(80 * MIB + 123);
  const file = path.join(folder, 'large.bin');
  await writeFile(file, bytes);

  await page.setInputFiles('#file-input', file);
  let held = 0;
  for (let i = 0; i < 600 && held === 0; i++) {
    held = (await system(server)).unfinished_upload_bytes;
    if (held === 0) await new Promise((resolve) => setTimeout(resolve, 20));
  }
  assert.ok(held > 0 && held < bytes.length, `part of the file is on the server before the reload: ${held}`);
  await page.reload();

  await page.setInputFiles('#file-input', file);
  const [row] = await waitForUploads(page, 1, { timeout: 60_000 });
  assert.equal(row.status, 'Done', row.status);
  assert.equal(sha256(await fetchBytes(row.link)), sha256(bytes));
  const after = await system(server);
  assert.equal(after.unfinished_uploads, 0, 'the upload begun before the reload is the one that finished');
  assert.equal(after.files, 1);
});
