// Journey: the owner picks two files, watches them upload, copies a link and scans the QR code;
// then drops a third file anywhere on the page.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import test from 'node:test';
import { TEST_TIMEOUT, assertNoProblems, fetchBytes, openApp, sha256, waitForUploads } from '../helpers.mjs';

test('two files chosen with the picker upload with progress, link, copy button and QR code', { timeout: TEST_TIMEOUT }, async (t) => {
  const { server, page, context, problems } = await openApp(t);
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });

  const big = randomBytes(3 * 1024 * 1024 + 17);
  const small = Buffer.from('hello from the picker\n');
  await page.setInputFiles('#file-input', [
    { name: 'big.bin', mimeType: 'application/octet-stream', buffer: big },
    { name: 'notes one.txt', mimeType: 'text/plain', buffer: small },
  ]);

  const rows = await waitForUploads(page, 2);
  assert.equal(rows.length, 2);
  for (const row of rows) {
    assert.equal(row.status, 'Done', `${row.name}: ${row.status}`);
    assert.equal(row.percent, '100%');
    assert.equal(row.progress, 100);
    assert.ok(row.link?.startsWith(`${server.url}/f/`), `a link for ${row.name}: ${row.link}`);
    assert.equal(row.linkText, row.link);
    assert.equal(row.copyUrl, row.link);
    assert.match(row.qr, /^\/files\/[^/]+\/qr\.svg$/);
  }
  // Screen readers hear each row end once, with its name, not every percent.
  const spoken = await page.$$eval('#uploads li.upload', (lis) =>
    lis.map((li) => ({
      said: li.querySelector('.upload-announcement')?.textContent,
      quiet: li.querySelector('.upload-percent')?.closest('[aria-live]')?.getAttribute('aria-live'),
    })),
  );
  for (const { said, quiet } of spoken) {
    assert.match(said, /^(big\.bin|notes one\.txt): done$/);
    assert.equal(quiet, 'off', 'the fast-changing numbers are not announced');
  }
  assert.equal(await page.getAttribute('#uploads', 'aria-live'), 'polite');
  const byName = Object.fromEntries(rows.map((row) => [row.name, row]));
  assert.equal(sha256(await fetchBytes(byName['big.bin'].link)), sha256(big));
  assert.deepEqual(await fetchBytes(byName['notes one.txt'].link), small);
  assert.match(byName['notes one.txt'].link, /notes%20one\.txt$/);

  // Every QR image really loaded (an error or a CSP refusal leaves naturalWidth at 0).
  await page.waitForFunction(() =>
    [...document.querySelectorAll('img.upload-qr')].every((img) => img.complete && img.naturalWidth > 0),
  );

  const copy = page.locator('li.upload', { hasText: 'big.bin' }).locator('button.copy-link');
  await copy.click();
  await page.waitForFunction((button) => button.textContent === 'Copied', await copy.elementHandle());
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), byName['big.bin'].link);

  // A drop anywhere on the page, not only on the hint box.
  await page.evaluate(() => {
    const data = new DataTransfer();
    data.items.add(new File(['dropped bytes'], 'dropped.txt', { type: 'text/plain' }));
    for (const type of ['dragenter', 'dragover', 'drop']) {
      document.querySelector('h1, main').dispatchEvent(new DragEvent(type, { dataTransfer: data, bubbles: true, cancelable: true }));
    }
  });
  const afterDrop = await waitForUploads(page, 3);
  const dropped = afterDrop.find((row) => row.name === 'dropped.txt');
  assert.ok(dropped, 'the dropped file is listed');
  assert.equal(dropped.status, 'Done');
  assert.equal((await fetchBytes(dropped.link)).toString(), 'dropped bytes');
  assert.equal(await page.evaluate(() => document.documentElement.classList.contains('dragging')), false);

  // Choosing "custom" shows the date field; another choice hides it again.
  assert.equal(await page.isVisible('#expiry-date'), false);
  await page.selectOption('#expiry', 'custom');
  assert.equal(await page.isVisible('#expiry-date'), true);
  await page.selectOption('#expiry', '7');
  assert.equal(await page.isVisible('#expiry-date'), false);

  assertNoProblems(problems);
});

test('expiry, note, cancel and a refused upload show in the list', { timeout: TEST_TIMEOUT }, async (t) => {
  const { server, page, problems } = await openApp(t, { serverEnv: { BLOBDROP_MAX_UPLOAD: '4MiB' } });

  // "On a date" without a date: nothing is sent, and the date field asks for one.
  await page.selectOption('#expiry', 'custom');
  await page.setInputFiles('#file-input', { name: 'undated.txt', mimeType: 'text/plain', buffer: Buffer.from('x') });
  await page.waitForTimeout(300);
  assert.equal(await page.locator('#uploads li.upload').count(), 0, 'no upload without the date');
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'expiry-date');

  // A custom day: the file expires at the end of that day, local time.
  const day = new Date(Date.now() + 10 * 86_400_000);
  const iso = `${day.getFullYear()}-${String(day.getMonth() + 1).padStart(2, '0')}-${String(day.getDate()).padStart(2, '0')}`;
  await page.fill('#expiry-date', iso);
  await page.fill('#note', 'for the auditors');
  await page.setInputFiles('#file-input', { name: 'dated.txt', mimeType: 'text/plain', buffer: Buffer.from('dated') });
  const [row] = await waitForUploads(page, 1);
  assert.equal(row.status, 'Done');
  const id = new URL(row.link).pathname.split('/')[2];
  const meta = await (await fetch(`${server.url}/api/files/${id}`, { headers: { Authorization: `Bearer ${server.secret}` } })).json();
  assert.equal(meta.note, 'for the auditors');
  const expected = await page.evaluate((d) => {
    const [y, m, dd] = d.split('-').map(Number);
    return new Date(y, m - 1, dd, 23, 59, 59).getTime();
  }, iso);
  assert.ok(Math.abs(Date.parse(meta.expires) - expected) < 2000, `expires ${meta.expires}`);

  // Cancelling a slow upload: the server sees a throttled body, the button aborts it.
  await page.selectOption('#expiry', '1');
  await page.fill('#note', '');
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Network.enable');
  await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: 256 * 1024 });
  await page.setInputFiles('#file-input', { name: 'slow.bin', mimeType: 'application/octet-stream', buffer: randomBytes(3 * 1024 * 1024) });
  const slow = page.locator('li.upload', { hasText: 'slow.bin' });
  await slow.locator('.upload-status', { hasText: 'Uploading' }).waitFor();
  await page.waitForFunction(() => {
    const row = [...document.querySelectorAll('li.upload')].find((li) => li.textContent.includes('slow.bin'));
    return row && /^\d+(\.\d+)? (B|KiB|MiB|GiB)\/s$/.test(row.querySelector('.upload-speed').textContent) && / left$/.test(row.querySelector('.upload-eta').textContent);
  }, null, { timeout: 15_000 });
  await slow.locator('button.upload-cancel').click();
  await slow.locator('.upload-status', { hasText: 'Cancelled' }).waitFor();
  assert.equal(await slow.locator('button.upload-cancel').isVisible(), false);
  await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: -1 });

  const listed = await (await fetch(`${server.url}/api/files`, { headers: { Authorization: `Bearer ${server.secret}` } })).text();
  assert.doesNotMatch(listed, /slow\.bin/, 'a cancelled upload leaves no file');

  // Over the size limit the page states: refused before a byte is sent.
  await page.setInputFiles('#file-input', { name: 'too-big.bin', mimeType: 'application/octet-stream', buffer: randomBytes(5 * 1024 * 1024) });
  const tooBig = page.locator('li.upload', { hasText: 'too-big.bin' });
  await tooBig.locator('.upload-status', { hasText: /^Failed: larger than the 4\.0 MiB limit/ }).waitFor();

  // The session ended elsewhere: the server's one-line reason is shown, never markup.
  await page.context().clearCookies();
  await page.setInputFiles('#file-input', { name: 'orphan.txt', mimeType: 'text/plain', buffer: Buffer.from('x') });
  const orphan = page.locator('li.upload', { hasText: 'orphan.txt' });
  await orphan
    .locator('.upload-status', { hasText: /^Failed: \S/ })
    .waitFor({ timeout: 10_000 })
    .catch(async () => {
      const stuck = await orphan.locator('.upload-status').textContent();
      // A 401 carrying WWW-Authenticate: Basic makes Chromium hold the XHR for its login dialog.
      assert.fail(`the upload without a session never failed (status "${stuck}")`);
    });
  const reason = await orphan.locator('.upload-status').textContent();
  assert.doesNotMatch(reason, /[<\n]/, `one line, no markup: ${reason}`);

  assertNoProblems(problems);
});
