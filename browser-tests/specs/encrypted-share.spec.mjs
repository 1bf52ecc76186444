// Journey: the owner drops two files and a folder with "Encrypt in this browser" and "One link for
// all" ticked, and gets one share whose link carries one age key (issue 29). The server holds only
// `encrypted-N.age` and `encrypted-names.age`; a stranger opening the link sees the real names (as
// text, never markup), downloads one file decrypted, and downloads them all as a zip decrypted in
// the page (through the save picker and without it). The server's own zip holds the ciphertext,
// which Debian's `age -d` opens with the key from the link; a wrong key is refused in words.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'node:test';
import { TEST_TIMEOUT, assertNoProblems, fetchBytes, idOf, openApp, sha256, uploadWithApi, watchPage } from '../helpers.mjs';
import { ZipWriter, blobSink } from '../../static/js/zip-stream.js';

const HOSTILE = '<img src=x onerror=alert(1)>.txt';

async function scratch(t) {
  const folder = await mkdtemp(path.join(tmpdir(), 'blobdrop-eshare-'));
  t.after(() => rm(folder, { recursive: true, force: true }));
  return folder;
}

/** Drops `paths` (files and folders) on the page as a file manager would (see shares.spec.mjs). */
async function drop(page, paths) {
  const cdp = await page.context().newCDPSession(page);
  const box = await page.locator('#drop-zone').boundingBox();
  const at = { x: box.x + box.width / 2, y: box.y + box.height / 2 };
  const data = { items: [], files: paths, dragOperationsMask: 1 };
  for (const type of ['dragEnter', 'dragOver', 'drop']) {
    await cdp.send('Input.dispatchDragEvent', { type, ...at, data });
  }
}

/** Every member of the zip at `file`, tested by Python's zipfile: `{ name: sha256 }`. */
function zipMembers(file) {
  const script = `
import hashlib, json, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    assert z.testzip() is None
    print(json.dumps({i.filename: hashlib.sha256(z.read(i)).hexdigest() for i in z.infolist()}))
`;
  return JSON.parse(execFileSync('python3', ['-c', script, file]).toString());
}

/** `unzip -t` of the zip at `file` says every member is whole. */
function assertUnzipTests(file) {
  const said = execFileSync('unzip', ['-t', file]).toString();
  assert.match(said, /No errors detected/, said);
}

/** Opens `link` in `context` and waits until the page has read the names, or refused to. */
async function openShare(context, link) {
  const page = await context.newPage();
  const problems = watchPage(page);
  page.on('dialog', (dialog) => {
    problems.push(`a dialog opened: ${dialog.message()}`);
    dialog.dismiss().catch(() => {});
  });
  await page.goto(link);
  await page.waitForFunction(() => /files?, decrypted|Not decrypted/.test(document.getElementById('share-decrypt-status').textContent));
  return { page, problems };
}

test('a dropped batch encrypted as one share opens with the one key in its link', { timeout: 3 * TEST_TIMEOUT }, async (t) => {
  const { server, browser, page, problems } = await openApp(t);
  const folder = await scratch(t);
  const binary = randomBytes(3 * 1024 * 1024);
  const text = Buffer.from('not <b>markup</b>\n'.repeat(50));
  const inner = Buffer.from('inside a folder\n');
  await writeFile(path.join(folder, 'random.bin'), binary);
  await writeFile(path.join(folder, HOSTILE), text);
  await mkdir(path.join(folder, 'docs'));
  await writeFile(path.join(folder, 'docs', 'inner.txt'), inner);
  const originals = { 'random.bin': sha256(binary), [HOSTILE]: sha256(text), 'docs/inner.txt': sha256(inner) };

  await page.check('#encrypt');
  assert.equal(await page.isDisabled('#one-link'), false, 'one link for all stays usable with encryption');
  await page.check('#one-link');
  await drop(page, [path.join(folder, 'random.bin'), path.join(folder, HOSTILE), path.join(folder, 'docs')]);
  await page.waitForSelector('.share-row[data-state="done"] a.share-link', { timeout: 60_000 });
  const link = await page.getAttribute('.share-row a.share-link', 'href');
  const match = new RegExp(`^${server.url}/s/([A-Za-z0-9_-]{22})#(AGE-SECRET-KEY-1[0-9A-Z]+)$`).exec(link);
  assert.ok(match, `a share link with the key alone in its fragment: ${link}`);
  const [, shareId, key] = match;

  // The server knows no name: placeholders, and a share called "Encrypted files".
  const stored = await (await fetch(`${server.url}/api/files`, { headers: { Authorization: `Bearer ${server.secret}` } })).json();
  assert.deepEqual(stored.map((file) => file.filename).sort(), ['encrypted-1.age', 'encrypted-2.age', 'encrypted-3.age', 'encrypted-names.age']);
  const shareJson = await (await fetch(`${server.url}/api/shares/${shareId}`, { headers: { Authorization: `Bearer ${server.secret}` } })).json();
  assert.equal(shareJson.name, 'Encrypted files');
  assert.equal(shareJson.require_encryption, true, 'the page asks the server to take only age files into it');

  // A stranger, in a fresh browser context, sees the real names, as text.
  const stranger = await browser.newContext({ baseURL: server.url, acceptDownloads: true });
  t.after(() => stranger.close().catch(() => {}));
  const { page: viewer, problems: viewerProblems } = await openShare(stranger, link);
  assert.match(await viewer.textContent('#share-decrypt-status'), /^3 files/);
  assert.equal(await viewer.textContent('#share-count'), '3 files (encrypted)', 'the names file is not counted as a file');
  assert.equal(await viewer.isVisible('#share-files tbody tr[hidden]'), false, 'the names file has no row');
  const names = await viewer.$$eval('#share-files tbody tr:not([hidden]) td.name', (cells) => cells.map((cell) => cell.textContent.trim()).sort());
  assert.deepEqual(names, Object.keys(originals).sort());
  assert.equal(await viewer.locator('#share-files img').count(), 0, 'the hostile name is text, never markup');
  assert.equal(await viewer.locator('#share-files td.preview img, #share-files td.preview video').count(), 0, 'no server preview of ciphertext');

  // One file, decrypted in the page, under its real name.
  const [one] = await Promise.all([viewer.waitForEvent('download', { timeout: 60_000 }), viewer.getByRole('button', { name: 'Download random.bin' }).click()]);
  assert.equal(one.suggestedFilename(), 'random.bin');
  assert.equal(sha256(await readFile(await one.path())), originals['random.bin']);

  // All of them as a zip decrypted in the page, collected in a Blob where there is no save picker.
  await viewer.evaluate(() => {
    delete window.showSaveFilePicker;
    Reflect.deleteProperty(Object.getPrototypeOf(window), 'showSaveFilePicker');
  });
  const [zipped] = await Promise.all([viewer.waitForEvent('download', { timeout: 60_000 }), viewer.click('#download-decrypted')]);
  const zipFile = path.join(folder, 'decrypted.zip');
  await writeFile(zipFile, await readFile(await zipped.path()));
  assertUnzipTests(zipFile);
  assert.deepEqual(zipMembers(zipFile), originals);

  // And written to disk through showSaveFilePicker where it exists (here onto the origin's private
  // file system, as the real picker's handle would be onto a file the user chose).
  const viaPicker = await viewer.evaluate(async () => {
    const root = await navigator.storage.getDirectory();
    let picked = null;
    window.showSaveFilePicker = async ({ suggestedName }) => {
      picked = suggestedName;
      return root.getFileHandle(suggestedName, { create: true });
    };
    document.getElementById('download-decrypted').click();
    for (;;) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      const said = document.getElementById('share-decrypt-status').textContent;
      if (said.startsWith('Not decrypted')) throw new Error(said);
      if (said.startsWith('Decrypted 3 files')) break;
    }
    const file = await (await root.getFileHandle(picked)).getFile();
    const bytes = new Uint8Array(await file.arrayBuffer());
    let binary = '';
    for (let at = 0; at < bytes.length; at += 0x8000) binary += String.fromCharCode(...bytes.subarray(at, at + 0x8000));
    return { picked, zip: btoa(binary) };
  });
  assert.equal(viaPicker.picked, 'Shared files.zip', 'named after the share, as its uploader named it');
  const pickedFile = path.join(folder, 'picked.zip');
  await writeFile(pickedFile, Buffer.from(viaPicker.zip, 'base64'));
  assertUnzipTests(pickedFile);
  assert.deepEqual(zipMembers(pickedFile), originals);

  // The server's zip holds only ciphertext under placeholder names; age -d opens each member.
  const serverZip = await fetchBytes(`${server.url}/s/${shareId}/zip`);
  const serverZipFile = path.join(folder, 'server.zip');
  await writeFile(serverZipFile, serverZip);
  const members = Object.keys(zipMembers(serverZipFile)).sort();
  assert.deepEqual(members, ['encrypted-1.age', 'encrypted-2.age', 'encrypted-3.age', 'encrypted-names.age']);
  const keyFile = path.join(folder, 'key.txt');
  await writeFile(keyFile, `${key}\n`);
  const unpacked = path.join(folder, 'unpacked');
  execFileSync('unzip', ['-q', '-d', unpacked, serverZipFile]);
  const opened = [];
  for (const member of members.filter((name) => name !== 'encrypted-names.age')) {
    const sealed = await readFile(path.join(unpacked, member));
    assert.ok(sealed.subarray(0, 22).equals(Buffer.from('age-encryption.org/v1\n')), member);
    opened.push(sha256(execFileSync('age', ['-d', '-i', keyFile, path.join(unpacked, member)], { maxBuffer: 16 * 1024 * 1024 })));
  }
  assert.deepEqual(opened.sort(), Object.values(originals).sort());
  const listed = JSON.parse(execFileSync('age', ['-d', '-i', keyFile, path.join(unpacked, 'encrypted-names.age')]).toString());
  assert.deepEqual(listed.files.map(({ folder: where, name }) => (where ? `${where}/${name}` : name)).sort(), Object.keys(originals).sort());

  // Another key in the link: a reason in words, no names, nothing to download.
  const otherKey = execFileSync('age-keygen', { stdio: ['ignore', 'pipe', 'ignore'] }).toString().split('\n').find((line) => line.startsWith('AGE-SECRET-KEY-1'));
  const { page: wrong, problems: wrongProblems } = await openShare(stranger, `${server.url}/s/${shareId}#${otherKey}`);
  assert.match(await wrong.textContent('#share-decrypt-status'), /^Not decrypted: wrong key/);
  assert.equal(await wrong.isDisabled('#download-decrypted'), true);
  assert.equal(await wrong.locator('button.decrypt-one').count(), 0);

  // No key at all: the page asks for a passphrase instead.
  const bare = await stranger.newPage();
  await bare.goto(`${server.url}/s/${shareId}`);
  await bare.waitForSelector('#share-passphrase', { state: 'visible' });

  assertNoProblems([...problems, ...viewerProblems, ...wrongProblems]);
});

test('a guest link that makes each batch one share encrypts the batch under one key', { timeout: TEST_TIMEOUT }, async (t) => {
  const { server, page, context, problems } = await openApp(t, { signedIn: false });
  const created = await fetch(`${server.url}/api/guest-links`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${server.secret}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ label: 'Ana', share_batches: true }),
  });
  assert.equal(created.status, 201);
  await page.goto((await created.json()).url);
  await page.check('#encrypt');
  const first = randomBytes(100_000);
  await page.setInputFiles('#file-input', [
    { name: 'one.bin', mimeType: 'application/octet-stream', buffer: first },
    { name: 'two.txt', mimeType: 'text/plain', buffer: Buffer.from('two\n') },
  ]);
  await page.waitForSelector('.share-row[data-state="done"] a.share-link', { timeout: 60_000 });
  const link = await page.getAttribute('.share-row a.share-link', 'href');
  assert.match(link, /\/s\/[A-Za-z0-9_-]{22}#AGE-SECRET-KEY-1[0-9A-Z]+$/);
  const { page: viewer, problems: viewerProblems } = await openShare(context, link);
  const names = await viewer.$$eval('#share-files tbody tr:not([hidden]) td.name', (cells) => cells.map((cell) => cell.textContent.trim()).sort());
  assert.deepEqual(names, ['one.bin', 'two.txt']);
  const [saved] = await Promise.all([viewer.waitForEvent('download'), viewer.getByRole('button', { name: 'Download one.bin' }).click()]);
  assert.equal(sha256(await readFile(await saved.path())), sha256(first));
  assertNoProblems([...problems, ...viewerProblems]);
});

test('a share made with the age command line opens in the page, and changed or cut files are refused in words', { timeout: TEST_TIMEOUT }, async (t) => {
  const { server, context } = await openApp(t, { signedIn: false });
  const folder = await scratch(t);
  const keyFile = path.join(folder, 'key.txt');
  execFileSync('age-keygen', ['-o', keyFile], { stdio: 'ignore' });
  const identity = (await readFile(keyFile, 'utf8')).split('\n').find((line) => line.startsWith('AGE-SECRET-KEY-1'));
  const recipient = execFileSync('age-keygen', ['-y', keyFile]).toString().trim();
  const seal = (bytes) => execFileSync('age', ['-r', recipient], { input: bytes });
  const good = randomBytes(150_000);
  const sealed = seal(good);
  const changed = Buffer.from(sealed);
  changed[changed.length - 500] ^= 1;
  const cut = sealed.subarray(0, sealed.length - 100);
  const names = {
    format: 'blobdrop-encrypted-share/1',
    title: 'Made with age',
    files: [
      { file: 'encrypted-1.age', name: 'good.bin', type: 'application/octet-stream', folder: 'a/../../b' },
      { file: 'encrypted-2.age', name: 'changed.bin', type: 'application/octet-stream', folder: '' },
      { file: 'encrypted-3.age', name: 'cut.bin', type: 'application/octet-stream', folder: '' },
    ],
  };
  const uploaded = [];
  for (const [name, body] of [['encrypted-1.age', sealed], ['encrypted-2.age', changed], ['encrypted-3.age', cut], ['encrypted-names.age', seal(Buffer.from(JSON.stringify(names)))]]) {
    uploaded.push({ id: idOf((await uploadWithApi(server, name, body)).url) });
  }
  const made = await fetch(`${server.url}/api/shares`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${server.secret}`, 'Content-Type': 'application/json', Accept: 'application/json' },
    body: JSON.stringify({ name: 'Encrypted files', files: uploaded }),
  });
  assert.equal(made.status, 201, await made.clone().text());
  const { page, problems } = await openShare(context, `${(await made.json()).url}#${identity}`);
  assert.equal(await page.textContent('#share-name'), 'Made with age');
  // A folder with `..` in the names file is cleaned, as it would be in the zip.
  const shown = await page.$$eval('#share-files tbody tr:not([hidden]) td.name', (cells) => cells.map((cell) => cell.textContent.trim()).sort());
  assert.deepEqual(shown, ['a/b/good.bin', 'changed.bin', 'cut.bin']);
  const [saved] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download good.bin' }).click()]);
  assert.equal(sha256(await readFile(await saved.path())), sha256(good));
  let downloads = 0;
  page.on('download', () => {
    downloads += 1;
  });
  for (const name of ['changed.bin', 'cut.bin']) {
    await page.getByRole('button', { name: `Download ${name}` }).click();
    await page.waitForFunction(() => document.getElementById('share-decrypt-status').textContent.startsWith('Not decrypted'));
    const said = await page.textContent('#share-decrypt-status');
    assert.match(said, /^Not decrypted: [^\n]*(does not open|truncated)/, `${name}: ${said}`);
    await page.evaluate(() => {
      document.getElementById('share-decrypt-status').textContent = '';
    });
  }
  // All, decrypted: stops at the changed file, saves nothing.
  await page.evaluate(() => {
    delete window.showSaveFilePicker;
    Reflect.deleteProperty(Object.getPrototypeOf(window), 'showSaveFilePicker');
  });
  await page.click('#download-decrypted');
  await page.waitForFunction(() => document.getElementById('share-decrypt-status').textContent.startsWith('Not decrypted'));
  assert.equal(downloads, 0, 'no wrong bytes saved');
  assertNoProblems(problems);
});

test('the page-made zip has ZIP64 records that zipfile and unzip read', async (t) => {
  const folder = await scratch(t);
  // Files past 4 GiB are too big for a test; `forceZip64` writes every record as they get it.
  const big = randomBytes(200_000);
  for (const forceZip64 of [false, true]) {
    const zip = new ZipWriter(blobSink(), { forceZip64 });
    await zip.add('a/b é.txt', new Blob(['hello\n']));
    await zip.add('big.bin', new Blob([big]));
    await zip.add('empty', new Blob([]));
    const file = path.join(folder, `out-${forceZip64}.zip`);
    await writeFile(file, Buffer.from(await (await zip.finish()).arrayBuffer()));
    assertUnzipTests(file);
    assert.deepEqual(zipMembers(file), { 'a/b é.txt': sha256(Buffer.from('hello\n')), 'big.bin': sha256(big), empty: sha256(Buffer.alloc(0)) });
    if (forceZip64) assert.ok((await readFile(file)).includes(Buffer.from([0x50, 0x4b, 0x06, 0x06])), 'a ZIP64 end record');
  }
});
