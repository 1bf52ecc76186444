// Journey: the owner adds a person on the accounts page; the person opens the invite link in their
// own browser, sets a password, lands on their account page, uploads a file of their own and finds
// it, and nothing of the owner's, on their files page; signs out and back in by name; the owner
// disables them and their session ends at once.

import assert from 'node:assert/strict';
import test from 'node:test';
import { TEST_TIMEOUT, assertNoProblems, fetchBytes, openApp, waitForUploads, watchPage } from '../helpers.mjs';

test('an admin invites a person, who sets a password and sees only their own account', { timeout: TEST_TIMEOUT }, async (t) => {
  const { server, browser, page, problems } = await openApp(t);
  await page.setInputFiles('#file-input', { name: 'owners.txt', mimeType: 'text/plain', buffer: Buffer.from('the owner\'s') });
  assert.equal((await waitForUploads(page, 1))[0].status.trim(), 'Done');

  await page.goto('/accounts');
  await page.fill('#account-name', 'anna');
  await page.selectOption('#account-role', 'member');
  await Promise.all([page.waitForLoadState('load'), page.click('#account-form [type=submit]')]);
  const invite = (await page.textContent('#invite-url')).trim();
  assert.match(invite, new RegExp(`^${server.url}/invite/[A-Za-z0-9_-]{43}$`));
  const annasRow = page.locator('#accounts tbody tr', { hasText: 'anna' });
  assert.equal((await annasRow.locator('.state').textContent()).trim(), 'invited');

  // Anna, in a browser of her own.
  const theirs = await browser.newContext({ baseURL: server.url });
  t.after(() => theirs.close().catch(() => {}));
  const anna = await theirs.newPage();
  const annasProblems = watchPage(anna);
  await anna.goto(invite);
  assert.match(await anna.textContent('h1'), /Welcome, anna/);
  await anna.fill('#invite-password', 'short');
  assert.equal(await anna.$eval('#invite-password', (input) => input.validity.valid), false, 'the field asks for 8 characters');
  await anna.fill('#invite-password', 'anna has a good password');
  await Promise.all([anna.waitForURL(`${server.url}/account`), anna.click('#invite-form [type=submit]')]);
  assert.equal((await anna.textContent('#account-name')).trim(), 'anna');
  assert.equal((await anna.textContent('#account-role')).trim(), 'member');
  assert.equal(await anna.locator('header nav a[href="/accounts"]').count(), 0, 'no admin pages in a member\'s navigation');
  assert.equal(await anna.locator('header nav a[href="/account"]').count(), 1);
  const accounts = await anna.goto('/accounts');
  assert.equal(accounts.status(), 403);

  // Her own files: she uploads one from the upload page, and her files page lists it, not the owner's.
  await anna.goto('/');
  await anna.setInputFiles('#file-input', { name: 'annas.txt', mimeType: 'text/plain', buffer: Buffer.from('anna\'s bytes') });
  const [uploaded] = await waitForUploads(anna, 1);
  assert.equal((await fetchBytes(uploaded.link)).toString(), 'anna\'s bytes');
  await Promise.all([anna.waitForURL(`${server.url}/files`), anna.click('header nav a[href="/files"]')]);
  const listed = await anna.textContent('main');
  assert.ok(listed.includes('annas.txt'), 'her file is listed');
  assert.ok(!listed.includes('owners.txt'), 'the owner\'s file is not');

  // The owner gives her a quota on the accounts page; her account page shows her use of it as a bar.
  await page.goto('/accounts');
  const annasQuota = page.locator('#accounts tbody tr', { hasText: 'anna' }).locator('form.quota-form');
  await annasQuota.locator('input[name=bytes]').fill('1MiB');
  await annasQuota.locator('input[name=files]').fill('10');
  await Promise.all([page.waitForURL(`${server.url}/accounts`), annasQuota.locator('button').click()]);
  assert.match(await page.locator('#accounts tbody tr', { hasText: 'anna' }).locator('.quota-text').textContent(), /of 1\.0 MiB, 1 of 10 files/);
  await anna.goto('/account');
  assert.match(await anna.textContent('#account-quota .quota-text'), /^12 B of 1\.0 MiB, 1 of 10 files$/);
  assert.equal(await anna.getAttribute('#account-quota meter.quota-bytes', 'max'), String(1 << 20));

  // The link worked once.
  const again = await anna.goto(invite);
  assert.equal(again.status(), 410);

  // Out, and back in by name.
  await anna.goto('/account');
  await Promise.all([anna.waitForURL(/\/login\?signed_out=1$/), anna.click('#logout-form button')]);
  await anna.fill('#name', 'Anna');
  await anna.fill('#secret', 'anna has a good password');
  await Promise.all([anna.waitForURL(`${server.url}/`), anna.click('#login-form [type=submit]')]);

  // The owner disables her: her next page is the sign-in page.
  await page.goto('/accounts');
  page.once('dialog', (dialog) => dialog.accept());
  await Promise.all([page.waitForURL(`${server.url}/accounts`), page.click('button[aria-label="Disable anna"]')]);
  assert.equal((await page.locator('#accounts tbody tr', { hasText: 'anna' }).locator('.state').textContent()).trim(), 'disabled');
  await anna.goto('/account');
  assert.match(anna.url(), /\/login/);

  assertNoProblems(problems);
  assertNoProblems(annasProblems);
});
