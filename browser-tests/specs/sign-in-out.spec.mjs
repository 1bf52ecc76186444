// Journey: the owner signs in (after one wrong try), sees the upload page, and signs out again.

import assert from 'node:assert/strict';
import test from 'node:test';
import { TEST_TIMEOUT, assertNoProblems, openApp } from '../helpers.mjs';

test('a wrong secret is refused, the right one opens the upload page, sign out ends the session', { timeout: TEST_TIMEOUT }, async (t) => {
  const { server, page, context, problems } = await openApp(t, { signedIn: false });

  await page.goto('/');
  assert.equal(await page.locator('a[href="/login"]').count() > 0, true, 'the anonymous landing links to sign in');
  assert.equal(await page.locator('#upload-form').count(), 0, 'no upload form for strangers');

  await page.goto('/login');
  await page.fill('#secret', 'not-the-secret');
  const [refused] = await Promise.all([
    page.waitForResponse((r) => r.url() === `${server.url}/login` && r.request().method() === 'POST'),
    page.click('#login-form [type=submit]'),
  ]);
  assert.equal(refused.status(), 401);
  await page.locator('#login-error').waitFor();
  assert.match(await page.textContent('#login-error'), /Wrong name, password or secret/);
  assert.equal(await page.getAttribute('#login-error', 'role'), 'alert');

  await page.fill('#secret', server.secret);
  await Promise.all([page.waitForURL(`${server.url}/`), page.click('#login-form [type=submit]')]);
  await page.locator('#upload-form').waitFor();
  const session = (await context.cookies()).find((c) => c.name === 'blobdrop_session');
  assert.ok(session, 'a session cookie is set');
  assert.equal(session.httpOnly, true);
  assert.equal(session.sameSite, 'Strict');
  for (const href of ['/', '/files', '/settings', '/tokens', '/system']) {
    assert.equal(await page.locator(`header nav a[href="${href}"]`).count(), 1, `nav links to ${href}`);
  }

  await Promise.all([page.waitForURL(/\/login\?signed_out=1$/), page.click('#logout-form button')]);
  await page.locator('#login-form').waitFor();

  await page.goto('/');
  assert.equal(await page.locator('#upload-form').count(), 0, 'the upload page is gone after sign out');
  assert.ok(await page.locator('a[href="/login"]').count() > 0, 'back to the anonymous landing');
  const files = await page.goto('/files');
  assert.ok(!(await page.locator('#files-table').count()), `no file list after sign out (status ${files.status()})`);

  assertNoProblems(problems);
});
