// Journey: end-to-end encryption in the age format, checked against Debian's `age` both ways. The
// owner ticks "Encrypt in this browser"; the link carries the key in its fragment; the server only
// ever holds an age file that `age -d` opens; files made with `age -r` and `age -p` open in the
// page; wrong keys and changed bytes are refused in words; and a page whose encryption is broken
// uploads nothing rather than the plaintext (Gokapi #357).

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'node:test';
import { BIN, TEST_TIMEOUT, assertNoProblems, fetchBytes, openApp, sha256, uploadWithApi, waitForUploads } from '../helpers.mjs';

async function scratch(t) {
  const folder = await mkdtemp(path.join(tmpdir(), 'blobdrop-age-'));
  t.after(() => rm(folder, { recursive: true, force: true }));
  return folder;
}

/** `age -p` reads its passphrase from a terminal only: typed into a pty, twice. */
function encryptWithPassphrase(input, output, passphrase) {
  const typist = `
import os, pty, sys
pid, fd = pty.fork()
if pid == 0:
    os.execvp("age", ["age", "-p", "-o", sys.argv[1], sys.argv[2]])
seen = b""
typed = 0
while True:
    try:
        data = os.read(fd, 1024)
    except OSError:
        break
    if not data:
        break
    seen += data
    if seen.lower().count(b"passphrase") > typed:
        typed += 1
        os.write(fd, sys.argv[3].encode() + b"\\n")
sys.exit(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
`;
  execFileSync('python3', ['-c', typist, output, input, passphrase], { timeout: 30_000 });
}

async function files(server) {
  const response = await fetch(`${server.url}/api/files`, { headers: { Authorization: `Bearer ${server.secret}` } });
  return response.json();
}

/** Opens `link` in a new page, decrypts (with `passphrase` if given) and returns the saved bytes. */
async function decryptInPage(context, link, passphrase) {
  const page = await context.newPage();
  await page.goto(link);
  if (passphrase) await page.fill('#passphrase', passphrase);
  const [download] = await Promise.all([page.waitForEvent('download', { timeout: 60_000 }), page.click('#decrypt')]);
  const saved = await download.path();
  assert.ok(saved, `the decrypted file was saved: ${await download.failure()}`);
  const name = download.suggestedFilename();
  await page.close();
  return { bytes: await readFile(saved), name };
}

/** What the page says when it cannot decrypt `link`. */
async function refusalInPage(context, link, passphrase) {
  const page = await context.newPage();
  await page.goto(link);
  if (passphrase) await page.fill('#passphrase', passphrase);
  await page.click('#decrypt');
  await page.waitForFunction(() => document.getElementById('decrypt-status').textContent.startsWith('Not decrypted'));
  const said = await page.textContent('#decrypt-status');
  assert.equal(await page.locator('#decrypted-save').count(), 0, 'nothing offered to save');
  await page.close();
  return said;
}

test('a file encrypted in the page is an age file on the server that age -d and the page open', { timeout: TEST_TIMEOUT }, async (t) => {
  const { server, page, context, problems } = await openApp(t);
  const folder = await scratch(t);
  // Three chunks and a bit, so the sealing of whole chunks and of a short last one both count.
  const original = randomBytes(3 * 65536 + 4321);
  await page.check('#encrypt');
  // Without "One link for all" each encrypted file gets a link of its own (encrypted-share.spec.mjs: with it).
  assert.equal(await page.isChecked('#one-link'), false);
  await page.setInputFiles('#file-input', { name: 'plan <b>x</b>.pdf', mimeType: 'application/pdf', buffer: original });
  const [row] = await waitForUploads(page, 1);
  assert.equal(row.status, 'Done', row.status);
  const link = new URL(row.link);
  assert.match(link.pathname, /^\/e\/[^/]+$/);
  const [key, name, type] = link.hash.slice(1).split('&');
  assert.match(key, /^AGE-SECRET-KEY-1[0-9A-Z]+$/);
  assert.equal(decodeURIComponent(name), 'name=plan <b>x</b>.pdf');
  assert.equal(type, 'type=application%2Fpdf');

  // The server has an age file under a placeholder name, and not one byte run of the plaintext.
  const id = link.pathname.split('/')[2];
  const [stored] = await files(server);
  assert.equal(stored.filename, 'encrypted.age');
  const ciphertext = await fetchBytes(`${server.url}/f/${id}`);
  assert.ok(ciphertext.subarray(0, 22).equals(Buffer.from('age-encryption.org/v1\n')));
  assert.equal(ciphertext.indexOf(original.subarray(1000, 1064)), -1);

  // Debian's age opens it with the link's key.
  const keyFile = path.join(folder, 'key.txt');
  await writeFile(keyFile, `${key}\n`);
  const opened = execFileSync('age', ['-d', '-i', keyFile], { input: ciphertext, maxBuffer: 64 * 1024 * 1024 });
  assert.equal(sha256(opened), sha256(original));

  // So does the link, in the page: the name shown as text, the bytes the same.
  const viewer = await context.newPage();
  await viewer.goto(row.link);
  assert.equal(await viewer.textContent('#encrypted-name'), 'plan <b>x</b>.pdf');
  assert.equal(await viewer.locator('#encrypted-name b').count(), 0, 'the name is text, never markup');
  await viewer.close();
  const saved = await decryptInPage(context, row.link);
  assert.equal(saved.name, 'plan _b_x__b_.pdf', 'the name saved, as Chromium makes it safe');
  assert.equal(sha256(saved.bytes), sha256(original));

  // And blobdrop get, with the page's link as it is.
  execFileSync(BIN, ['get', '-o', path.join(folder, 'by-get.pdf'), row.link], { stdio: 'pipe' });
  assert.equal(sha256(await readFile(path.join(folder, 'by-get.pdf'))), sha256(original));
  assertNoProblems(problems);
});

test('files made by the age command line open in the page, and bad keys or bytes are refused in words', { timeout: TEST_TIMEOUT }, async (t) => {
  const { server, context, problems } = await openApp(t);
  const folder = await scratch(t);
  const original = randomBytes(200_000);
  const plain = path.join(folder, 'photo.bin');
  await writeFile(plain, original);

  // age -r, uploaded with the API as curl -T would: opens with its identity in the fragment.
  const key = path.join(folder, 'key.txt');
  execFileSync('age-keygen', ['-o', key], { stdio: 'ignore' });
  const identity = (await readFile(key, 'utf8')).split('\n').find((line) => line.startsWith('AGE-SECRET-KEY-1'));
  const recipient = execFileSync('age-keygen', ['-y', key]).toString().trim();
  const sealed = execFileSync('age', ['-r', recipient], { input: original });
  const made = await uploadWithApi(server, 'photo.bin.age', sealed);
  const link = `${server.url}/e/${made.id}#${identity}&name=photo.bin`;
  const { bytes } = await decryptInPage(context, link);
  assert.equal(sha256(bytes), sha256(original));

  // blobdrop upload --encrypt prints the same kind of link: it opens in the page.
  const env = { ...process.env, BLOBDROP_URL: server.url, BLOBDROP_TOKEN: server.secret };
  const printed = execFileSync(BIN, ['upload', '--encrypt', plain], { env, stdio: ['ignore', 'pipe', 'pipe'] }).toString().trim();
  assert.match(printed, /\/e\/[^/#]+#AGE-SECRET-KEY-1[0-9A-Z]+&name=photo\.bin$/);
  const fromClient = await decryptInPage(context, printed);
  assert.equal(fromClient.name, 'photo.bin');
  assert.equal(sha256(fromClient.bytes), sha256(original));

  // age -p: the page asks for the passphrase.
  const withPassphrase = path.join(folder, 'photo.bin.age');
  encryptWithPassphrase(plain, withPassphrase, 'correct horse battery staple');
  const locked = await uploadWithApi(server, 'locked.age', await readFile(withPassphrase));
  const lockedLink = `${server.url}/e/${locked.id}#name=photo.bin`;
  assert.equal(sha256((await decryptInPage(context, lockedLink, 'correct horse battery staple')).bytes), sha256(original));
  assert.match(await refusalInPage(context, lockedLink, 'wrong horse'), /wrong passphrase/);

  // Another key, a changed chunk, two chunks swapped, a file cut short: never bytes, a reason.
  const otherKey = execFileSync('age-keygen').toString().split('\n').find((line) => line.startsWith('AGE-SECRET-KEY-1'));
  assert.match(await refusalInPage(context, `${server.url}/e/${made.id}#${otherKey}`), /wrong key/);
  const payload = sealed.indexOf('\n', sealed.indexOf('\n---') + 1) + 1 + 16;
  const changed = Buffer.from(sealed);
  changed[payload + 100] ^= 1;
  const swapped = Buffer.concat([
    sealed.subarray(0, payload),
    sealed.subarray(payload + 65552, payload + 2 * 65552),
    sealed.subarray(payload, payload + 65552),
    sealed.subarray(payload + 2 * 65552),
  ]);
  const cut = sealed.subarray(0, sealed.length - 100);
  for (const [name, body] of [['changed', changed], ['swapped', swapped], ['cut', cut]]) {
    const bad = await uploadWithApi(server, `${name}.age`, body);
    assert.match(await refusalInPage(context, `${server.url}/e/${bad.id}#${identity}`), /does not open/, name);
  }
  assertNoProblems(problems);
});

test('a page whose encryption is broken stores nothing, plaintext least of all', { timeout: TEST_TIMEOUT }, async (t) => {
  const { server, page, context } = await openApp(t);
  // As in Gokapi #357: the encrypting code is changed so that it hands over the plaintext. The
  // upload still says it is an age file, and the server holds it to that.
  await context.route('**/js/age-stream.js', async (route) => {
    const real = await (await route.fetch()).text();
    const broken = real
      .replace('const size = sealedSize(sealer, file.size);', 'const size = file.size;')
      .replace('const value = new Blob(await parts);', 'const value = file.slice(start, end);');
    assert.ok(broken.includes('const size = file.size;'), 'the test gives the plaintext size');
    assert.ok(broken.includes('const value = file.slice(start, end);'), 'the test hands over the plaintext');
    await route.fulfill({ body: broken, contentType: 'text/javascript' });
  });
  await page.reload();
  await page.check('#encrypt');
  await page.setInputFiles('#file-input', { name: 'secret.txt', mimeType: 'text/plain', buffer: Buffer.from('the plaintext\n'.repeat(100)) });
  const [row] = await waitForUploads(page, 1);
  assert.match(row.status, /^Failed: .*age-encrypted/);
  assert.equal(row.link, null);

  // And when the encryption cannot even load, the upload fails before a byte is sent.
  // The workers of the upload that just failed may still be loading age-stream.js through the
  // handler above: wait for it to answer them rather than leave it a route already handled.
  await context.unrouteAll({ behavior: 'wait' });
  await context.route('**/vendor/age.js', (route) => route.fulfill({ status: 404, body: 'gone' }));
  await page.reload();
  await page.check('#encrypt');
  await page.setInputFiles('#file-input', { name: 'secret.txt', mimeType: 'text/plain', buffer: Buffer.from('the plaintext\n') });
  const [again] = await waitForUploads(page, 1);
  assert.match(again.status, /^Failed: could not encrypt/);
  assert.deepEqual(await files(server), [], 'nothing was stored');
});
