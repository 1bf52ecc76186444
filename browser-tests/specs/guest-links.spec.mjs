// Journey: the owner creates a guest link in the browser; a guest with no session opens it, uploads
// a file with a progress bar and gets its link; the owner sees the file with the link's label.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import test from 'node:test';
import { TEST_TIMEOUT, assertNoProblems, fetchBytes, openApp, sha256, waitForUploads, watchPage } from '../helpers.mjs';

test('a guest uploads through a link the owner created, and the owner sees where the file came from', { timeout: TEST_TIMEOUT }, async (t) => {
  const { server, browser, page, problems } = await openApp(t);

  // The owner finds guest links in the navigation and creates one.
  await page.click('.site-nav a[href="/guest-links"]');
  await page.waitForURL(`${server.url}/guest-links`);
  assert.equal(await page.locator('#empty-state').count(), 1);
  await page.fill('#link-label', 'Holiday photos from Sam');
  await page.fill('#link-max-file-size', '20 MiB');
  await page.fill('#link-max-uploads', '2');
  await page.fill('#link-file-lifetime', '7');
  await Promise.all([page.waitForURL(/\/guest-links#link-/), page.click('#create-guest-link button[type=submit]')]);
  const row = page.locator('#guest-links-table tbody tr');
  assert.equal(await row.count(), 1);
  assert.match(await row.locator('td.label').textContent(), /Holiday photos from Sam/);
  assert.equal((await row.locator('td.status').textContent()).trim(), 'active');
  assert.equal((await row.locator('td.uploads').textContent()).trim(), '0 of 2');
  const guestUrl = await row.locator('button.copy-link').getAttribute('data-url');
  assert.match(guestUrl, new RegExp(`^${server.url}/g/[A-Za-z0-9_-]{22}$`));

  // A fresh context: no cookie, no secret, only the link.
  const guestContext = await browser.newContext({ viewport: { width: 390, height: 800 } });
  t.after(() => guestContext.close().catch(() => {}));
  const guest = await guestContext.newPage();
  const guestProblems = watchPage(guest);
  await guest.goto(guestUrl);
  assert.equal(await guest.locator('.site-nav').count(), 0, 'no owner navigation for a guest');
  assert.doesNotMatch(await guest.textContent('main'), /Holiday photos/, 'the label is the owner’s');
  assert.match(await guest.textContent('#drop-zone'), /Up to 20\.0 MiB per file/);

  const photo = randomBytes(2 * 1024 * 1024 + 11);
  await guest.setInputFiles('#file-input', [{ name: 'beach.jpg', mimeType: 'image/jpeg', buffer: photo }]);
  const [uploaded] = await waitForUploads(guest, 1);
  assert.equal(uploaded.status, 'Done', uploaded.status);
  assert.equal(uploaded.percent, '100%');
  assert.equal(uploaded.progress, 100);
  assert.ok(uploaded.link?.startsWith(`${server.url}/f/`), uploaded.link);
  assert.equal(uploaded.copyUrl, uploaded.link);
  assert.equal(uploaded.qr, null, 'no owner-only QR code or details for a guest');
  assert.equal(sha256(await fetchBytes(uploaded.link)), sha256(photo));

  // A file over the link's limit is refused in the page before a byte is sent.
  await guest.setInputFiles('#file-input', [{ name: 'huge.bin', mimeType: 'application/octet-stream', buffer: Buffer.alloc(21 * 1024 * 1024) }]);
  const afterHuge = await waitForUploads(guest, 2);
  const huge = afterHuge.find((entry) => entry.name === 'huge.bin');
  assert.match(huge.status, /^Failed: larger than the 20\.0 MiB limit/);

  // The owner sees the file with the link's label, and the link's count went up.
  await page.goto('/files');
  const fileRow = page.locator('#files-table tbody tr', { hasText: 'beach.jpg' });
  assert.match(await fileRow.locator('td.name').textContent(), /via Holiday photos from Sam/);
  await page.goto('/guest-links');
  assert.equal((await row.locator('td.uploads').textContent()).trim(), '1 of 2');

  // Disabled, the link tells the guest why and the upload fails with that reason.
  await Promise.all([page.waitForURL(/\/guest-links$/), row.locator('form.disable-form button').click()]);
  assert.equal((await row.locator('td.status').textContent()).trim(), 'disabled');
  await guest.setInputFiles('#file-input', [{ name: 'late.txt', mimeType: 'text/plain', buffer: Buffer.from('late') }]);
  const afterDisable = await waitForUploads(guest, 3);
  const late = afterDisable.find((entry) => entry.name === 'late.txt');
  assert.match(late.status, /^Failed: this guest link is disabled/);
  const reopened = await guest.goto(guestUrl);
  assert.equal(reopened.status(), 403);

  assertNoProblems(problems);
  assertNoProblems(guestProblems);
});
