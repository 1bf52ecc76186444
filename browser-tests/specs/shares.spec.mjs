// Journey: the owner uploads a whole folder with "Choose a folder", or drops one, and gets one link
// for all, whose zip holds every file under its path; then ticks two files on the files page and
// shares them. A guest drops a folder on a link that makes each batch one share.

import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'node:test';
import { TEST_TIMEOUT, assertNoProblems, fetchBytes, openApp, uploadWithApi } from '../helpers.mjs';

/** The member names of a zip, read from its central directory (stored entries, no ZIP64 here). */
function zipNames(zip) {
  const end = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  assert.ok(end > 0, 'an end of central directory record');
  const count = zip.readUInt16LE(end + 10);
  let at = zip.readUInt32LE(end + 16);
  const names = [];
  for (let i = 0; i < count; i += 1) {
    assert.equal(zip.readUInt32LE(at), 0x02014b50, 'a central directory header');
    const nameLength = zip.readUInt16LE(at + 28);
    names.push(zip.subarray(at + 46, at + 46 + nameLength).toString('utf8'));
    at += 46 + nameLength + zip.readUInt16LE(at + 30) + zip.readUInt16LE(at + 32);
  }
  return names;
}

test('a folder chosen in the browser becomes one share whose zip keeps its paths', { timeout: TEST_TIMEOUT }, async (t) => {
  const { server, page, problems } = await openApp(t);
  const root = await mkdtemp(path.join(tmpdir(), 'blobdrop-folder-'));
  t.after(() => rm(root, { recursive: true, force: true }));
  const folder = path.join(root, 'holiday');
  await mkdir(path.join(folder, 'day 1'), { recursive: true });
  await writeFile(path.join(folder, 'day 1', 'beach.jpg'), Buffer.alloc(70_000, 7));
  await writeFile(path.join(folder, 'notes.txt'), 'sun\n');

  await page.goto('/');
  assert.equal(await page.isVisible('#choose-folder'), true, 'the script shows the folder button');
  await page.setInputFiles('#folder-input', folder);
  await page.waitForSelector('.share-row[data-state="done"] a.share-link', { timeout: 30_000 });
  const link = await page.getAttribute('.share-row a.share-link', 'href');
  assert.match(link, new RegExp(`^${server.url}/s/[A-Za-z0-9_-]{22}$`));
  assert.match(await page.textContent('.share-row .upload-name'), /holiday/);

  const share = await page.context().newPage();
  await share.goto(link);
  assert.equal(await share.textContent('#share-name'), 'holiday');
  const rows = await share.$$eval('#share-files tbody tr td.name', (cells) => cells.map((cell) => cell.textContent.trim()).sort());
  assert.deepEqual(rows, ['day 1/beach.jpg', 'notes.txt']);
  const zipUrl = new URL(await share.getAttribute('#download-all', 'href'), link).href;
  const zip = await fetchBytes(zipUrl);
  assert.deepEqual(zipNames(zip).sort(), ['day 1/beach.jpg', 'notes.txt']);
  assertNoProblems(problems);
});

test('two files ticked on the files page are shared under one link', { timeout: TEST_TIMEOUT }, async (t) => {
  const { server, page, problems } = await openApp(t);
  const first = await uploadWithApi(server, 'first.txt', 'one');
  const second = await uploadWithApi(server, 'second.txt', 'two');
  await uploadWithApi(server, 'left out.txt', 'three');

  await page.goto('/files');
  assert.equal(await page.isDisabled('#share-selected'), true, 'nothing to share before a tick');
  await page.getByRole('checkbox', { name: 'Select first.txt' }).check();
  await page.getByRole('checkbox', { name: 'Select second.txt' }).check();
  await page.fill('#share-selected-name', 'Pair');
  await Promise.all([page.waitForURL(/\/s\/[A-Za-z0-9_-]{22}$/), page.click('#share-selected')]);
  assert.equal(await page.textContent('#share-name'), 'Pair');
  const names = await page.$$eval('#share-files tbody tr td.name', (cells) => cells.map((cell) => cell.textContent.trim()));
  assert.deepEqual(names.sort(), ['first.txt', 'second.txt']);
  // The share names its files by their keys in the share, never by their own ids: a file's own
  // link may carry a password or a download limit of its own that the share must not bypass.
  const html = await page.content();
  for (const file of [first, second]) assert.equal(html.includes(file.id), false, `the share page shows the own id ${file.id}`);

  await page.goto('/files');
  assert.match(await page.textContent('#shares-table'), /Pair/);

  // "Only encrypted files": the server refuses plain files into such a share, in words.
  await page.getByRole('checkbox', { name: 'Select first.txt' }).check();
  await page.getByRole('checkbox', { name: 'Only encrypted files' }).check();
  await page.fill('#share-selected-name', 'Sealed');
  await page.click('#share-selected');
  await page.waitForSelector('#share-selected-error:not([hidden])');
  assert.match(await page.textContent('#share-selected-error'), /takes only age-encrypted files/);
  assert.equal(new URL(page.url()).pathname, '/files', 'no share was made');
  assertNoProblems(problems);
});

/** A folder `holiday` with nested paths, in a temporary folder removed after the test. */
async function nestedFolder(t) {
  const root = await mkdtemp(path.join(tmpdir(), 'blobdrop-drop-'));
  t.after(() => rm(root, { recursive: true, force: true }));
  const folder = path.join(root, 'holiday');
  await mkdir(path.join(folder, 'day 1', 'evening'), { recursive: true });
  await writeFile(path.join(folder, 'day 1', 'beach.jpg'), Buffer.alloc(70_000, 7));
  await writeFile(path.join(folder, 'day 1', 'evening', 'sunset.jpg'), Buffer.alloc(1_000, 9));
  await writeFile(path.join(folder, 'notes.txt'), 'sun\n');
  return folder;
}

/**
 * Drops `folder` from the "operating system" on the page, as a real drag from a file manager:
 * Chromium's own drag events (DevTools' Input.dispatchDragEvent) carry the path, so the page gets
 * real FileSystemEntry objects for the folder and everything under it.
 */
async function dropFolder(page, folder) {
  const cdp = await page.context().newCDPSession(page);
  const box = await page.locator('#drop-zone').boundingBox();
  const at = { x: box.x + box.width / 2, y: box.y + box.height / 2 };
  const data = { items: [], files: [folder], dragOperationsMask: 1 };
  for (const type of ['dragEnter', 'dragOver', 'drop']) {
    await cdp.send('Input.dispatchDragEvent', { type, ...at, data });
  }
}

const DROPPED = ['day 1/beach.jpg', 'day 1/evening/sunset.jpg', 'notes.txt'];

test('a folder dropped on the upload page becomes one share whose zip keeps its nested paths', { timeout: TEST_TIMEOUT }, async (t) => {
  const { server, page, problems } = await openApp(t);
  const folder = await nestedFolder(t);
  await page.goto('/');
  await dropFolder(page, folder);
  await page.waitForSelector('.share-row[data-state="done"] a.share-link', { timeout: 30_000 });
  const link = await page.getAttribute('.share-row a.share-link', 'href');
  assert.match(link, new RegExp(`^${server.url}/s/[A-Za-z0-9_-]{22}$`));
  assert.match(await page.textContent('.share-row .upload-name'), /holiday/);
  const zip = await fetchBytes(`${link}/zip`);
  assert.deepEqual(zipNames(zip).sort(), DROPPED);
  assertNoProblems(problems);
});

test('a guest drops a folder on a link that makes each batch one share', { timeout: TEST_TIMEOUT }, async (t) => {
  const { server, page, problems } = await openApp(t, { signedIn: false });
  const created = await fetch(`${server.url}/api/guest-links`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${server.secret}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ label: 'Ana', share_batches: true }),
  });
  assert.equal(created.status, 201);
  const guestLink = (await created.json()).url;
  const folder = await nestedFolder(t);
  await page.goto(guestLink);
  await dropFolder(page, folder);
  await page.waitForSelector('.share-row[data-state="done"] a.share-link', { timeout: 30_000 });
  const link = await page.getAttribute('.share-row a.share-link', 'href');
  assert.match(link, /\/s\/[A-Za-z0-9_-]{22}$/);
  assert.deepEqual(zipNames(await fetchBytes(`${link}/zip`)).sort(), DROPPED);
  assertNoProblems(problems);
});
