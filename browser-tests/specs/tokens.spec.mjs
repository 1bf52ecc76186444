// Journey: the owner creates an API token for a script, copies it from the one page that shows it,
// and revokes it later; the script is refused from then on.

import assert from 'node:assert/strict';
import test from 'node:test';
import { TEST_TIMEOUT, assertNoProblems, openApp } from '../helpers.mjs';

const listFiles = (server, token) =>
  fetch(`${server.url}/api/files`, { headers: { Authorization: `Bearer ${token}` } }).then((r) => r.status);

test('a token is shown once after creation and stops working when revoked', { timeout: TEST_TIMEOUT }, async (t) => {
  const { server, page, problems } = await openApp(t);

  await Promise.all([page.waitForURL(`${server.url}/tokens`), page.click('nav a[href="/tokens"]')]);
  await page.fill('#token-label', 'nightly backup');
  await Promise.all([page.waitForLoadState('load'), page.click('#token-form button[type=submit]')]);
  await page.waitForSelector('#new-token-value');
  const token = (await page.textContent('#new-token-value')).trim();
  assert.equal(token.length, 43);
  assert.match(await page.textContent('#new-token'), /shown only this once/);
  assert.equal(await listFiles(server, token), 200, 'the token works as the secret does');

  await page.goto('/tokens');
  assert.equal(await page.locator('#new-token-value').count(), 0);
  assert.ok(!(await page.content()).includes(token), 'never shown again');
  const row = page.locator('#tokens tbody tr', { hasText: 'nightly backup' });
  assert.equal(await row.count(), 1);
  assert.doesNotMatch(await row.textContent(), /never/, 'its last use is noted');

  page.once('dialog', (dialog) => dialog.accept());
  await Promise.all([page.waitForURL(`${server.url}/tokens`), row.locator('button.danger').click()]);
  assert.equal(await page.locator('#tokens tbody tr', { hasText: 'nightly backup' }).count(), 0);
  assert.equal(await listFiles(server, token), 401, 'revoked: refused at once');

  assertNoProblems(problems);
});
