// Every page at a desktop and a phone width, light and dark, saved for review in
// test-artifacts/screenshots/. Also checks what a screenshot cannot show by itself: no page scrolls
// sideways at 390 px, and no page logs script errors or CSP refusals.

import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import test from 'node:test';
import { ARTIFACTS, TEST_TIMEOUT, assertNoProblems, idOf, openApp, uploadWithApi, waitForUploads } from '../helpers.mjs';

const OUT = path.join(ARTIFACTS, 'screenshots');
const SIZES = [
  { width: 1280, height: 800 },
  { width: 390, height: 844 },
];
const SCHEMES = ['light', 'dark'];

async function shootAll(page, name, overflow) {
  for (const size of SIZES) {
    await page.setViewportSize(size);
    for (const colorScheme of SCHEMES) {
      await page.emulateMedia({ colorScheme });
      await page.evaluate(() => document.fonts.ready);
      await page.screenshot({ path: path.join(OUT, `${name}-${size.width}-${colorScheme}.png`), fullPage: true, animations: 'disabled' });
    }
    if (size.width < 500) {
      const wide = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      if (wide > 1) overflow.push(`${name} is ${wide}px wider than the ${size.width}px screen`);
    }
  }
  await page.setViewportSize(SIZES[0]);
}

test('screenshots of every page at 1280 and 390 px, light and dark', { timeout: TEST_TIMEOUT * 2 }, async (t) => {
  await mkdir(OUT, { recursive: true });
  const { server, page, browser, problems } = await openApp(t);
  const overflow = [];

  // Some content first, so the list and the file pages are not empty.
  const text = await uploadWithApi(server, 'meeting-notes-with-a-rather-long-name-2024-05-01.txt', 'Agenda\n1. Budget\n2. Hiring\n'.repeat(5), { 'Max-Days': '7' });
  await uploadWithApi(server, 'archive.tar.gz', Buffer.alloc(1_572_864, 7));

  // The upload page with one finished upload (a real PNG, so the file page has an image preview).
  await page.fill('#note', 'Screenshot of the dashboard');
  await page.evaluate(async () => {
    const canvas = document.createElement('canvas');
    canvas.width = 320;
    canvas.height = 200;
    const g = canvas.getContext('2d');
    g.fillStyle = '#0a58ca';
    g.fillRect(0, 0, 320, 200);
    g.fillStyle = '#ffffff';
    g.font = '28px sans-serif';
    g.fillText('blobdrop', 100, 110);
    const blob = await new Promise((resolve) => canvas.toBlob(resolve, 'image/png'));
    const data = new DataTransfer();
    data.items.add(new File([blob], 'dashboard.png', { type: 'image/png' }));
    document.querySelector('main').dispatchEvent(new DragEvent('drop', { dataTransfer: data, bubbles: true, cancelable: true }));
  });
  const [image] = await waitForUploads(page, 1);
  assert.equal(image.status, 'Done');
  await page.waitForFunction(() => [...document.querySelectorAll('img.upload-qr')].every((img) => img.complete && img.naturalWidth > 0));
  await shootAll(page, 'upload', overflow);

  await page.goto('/files');
  await shootAll(page, 'files', overflow);
  await page.goto(`/files/${idOf(image.link)}`);
  await shootAll(page, 'file-image', overflow);
  await page.goto(`/files/${text.id}`);
  await shootAll(page, 'file-text', overflow);
  await page.goto('/settings');
  await shootAll(page, 'settings', overflow);
  await Promise.all([page.waitForURL(/saved=1/), page.click('#settings-form button:not([type=button])')]);
  await shootAll(page, 'settings-saved', overflow);
  await page.goto('/system');
  await shootAll(page, 'system', overflow);
  const created = await fetch(`${server.url}/api/guest-links`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${server.secret}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ label: 'Scans from the accountant, March', max_file_size: '100MiB', max_uploads: 10, file_lifetime_days: 30 }),
  });
  assert.equal(created.status, 201);
  const guestLink = await created.json();
  await page.goto('/guest-links');
  await shootAll(page, 'guest-links', overflow);
  await page.goto(`/guest-links/${guestLink.id}`);
  await shootAll(page, 'guest-link', overflow);
  await page.goto('/tokens');
  await page.fill('#token-label', 'nightly backup from the NAS');
  await Promise.all([page.waitForLoadState('load'), page.click('#token-form button[type=submit]')]);
  await page.locator('#new-token-value').waitFor();
  await shootAll(page, 'tokens-created', overflow);
  const guarded = await fetch(`${server.url}/api/files/${text.id}`, {
    method: 'PATCH',
    headers: { Authorization: `Bearer ${server.secret}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ password: 'pw' }),
  });
  assert.equal(guarded.status, 200);
  const missing = await page.goto('/files/AAAAAAAAAAAAAAAAAAAAAA');
  assert.equal(missing.status(), 404);
  await shootAll(page, 'not-found', overflow);
  await page.goto('/no/such/page');
  assert.match(await page.textContent('h1'), /404/);
  await shootAll(page, 'not-found-path', overflow);

  // Pages for strangers, in a context without the session.
  const anonymous = await browser.newContext({ baseURL: server.url, viewport: SIZES[0] });
  t.after(() => anonymous.close().catch(() => {}));
  const stranger = await anonymous.newPage();
  const strangerProblems = [];
  stranger.on('pageerror', (e) => strangerProblems.push(e.message));
  await stranger.goto('/');
  await shootAll(stranger, 'landing', overflow);
  await stranger.goto('/login');
  await shootAll(stranger, 'login', overflow);
  await stranger.fill('#secret', 'wrong');
  await stranger.click('#login-form [type=submit]');
  await stranger.locator('#login-error').waitFor();
  await shootAll(stranger, 'login-error', overflow);
  await stranger.goto(guestLink.url);
  await shootAll(stranger, 'guest-upload', overflow);
  await stranger.goto(`/f/${text.id}`);
  await stranger.locator('#password-form').waitFor();
  await shootAll(stranger, 'password', overflow);

  assert.deepEqual(overflow, [], 'no page scrolls sideways on a phone');
  assert.deepEqual(strangerProblems, []);
  // The two 404s above log "Failed to load resource"; only script errors and CSP refusals count.
  assertNoProblems(problems);
});
