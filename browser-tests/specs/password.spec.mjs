// Journey: the owner puts a password on a file; someone else with the link gets a password form,
// is told when the password is wrong, and downloads the same bytes with the right one.

import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import test from 'node:test';
import { TEST_TIMEOUT, assertNoProblems, openApp, sha256, uploadWithApi, watchPage } from '../helpers.mjs';

test('a password set on the file page guards the download behind a form', { timeout: TEST_TIMEOUT }, async (t) => {
  const { server, browser, page, problems } = await openApp(t);
  const bytes = Buffer.from(Array.from({ length: 100_000 }, (_, i) => (i * 7) % 251));
  const file = await uploadWithApi(server, 'plans.bin', bytes);

  await page.goto(`/files/${file.id}`);
  assert.match(await page.textContent('#password-state'), /none/);
  await page.fill('#edit-password', 'correct horse');
  await Promise.all([page.waitForURL(`${server.url}/files/${file.id}`), page.click('#edit-form button[type=submit]')]);
  assert.match(await page.textContent('#password-state'), /required to download/);
  assert.equal(await page.locator('#edit-remove-password').count(), 1, 'the owner can remove it again');

  // Someone else: a fresh browser context with no session.
  const stranger = await browser.newContext({ baseURL: server.url, acceptDownloads: true });
  t.after(() => stranger.close().catch(() => {}));
  const visitor = await stranger.newPage();
  const visitorProblems = watchPage(visitor);
  const first = await visitor.goto(file.url);
  assert.equal(first.status(), 401);
  assert.equal(await visitor.locator('#password-form').count(), 1, 'the link shows the password form');
  assert.equal(await visitor.getByText('plans.bin').count(), 0, 'the form does not give the name away');

  await visitor.fill('#file-password', 'wrong horse');
  await Promise.all([visitor.waitForLoadState('load'), visitor.click('#password-form button[type=submit]')]);
  await visitor.waitForSelector('#password-error');
  assert.match(await visitor.textContent('#password-error'), /Wrong password/);
  assert.equal((await stranger.cookies()).length, 0, 'a wrong password earns no cookie');

  await visitor.fill('#file-password', 'correct horse');
  const [download] = await Promise.all([
    visitor.waitForEvent('download'),
    visitor.click('#password-form button[type=submit]'),
  ]);
  const saved = await download.path();
  assert.ok(saved, `download finished: ${await download.failure()}`);
  assert.equal(sha256(await readFile(saved)), sha256(bytes), 'the same bytes');
  const [cookie] = await stranger.cookies();
  assert.equal(cookie.path, `/f/${file.id}`, 'the cookie is scoped to this one file');
  assert.ok(cookie.httpOnly && cookie.sameSite === 'Strict', JSON.stringify(cookie));

  // Without the cookie the link still needs the password.
  const anonymous = await fetch(file.url);
  assert.equal(anonymous.status, 401);

  assertNoProblems(problems);
  assertNoProblems(visitorProblems);
});
