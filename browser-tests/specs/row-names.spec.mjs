// Journey: a screen-reader user works through the files, guest links and tokens pages by button
// name: every row's button says which file, guest link or token it acts on ("Delete a.txt"), so
// the buttons list of a screen reader never holds ten indistinguishable "Delete".

import assert from 'node:assert/strict';
import test from 'node:test';
import { TEST_TIMEOUT, assertNoProblems, openApp, uploadWithApi, waitForUploads } from '../helpers.mjs';

const exactly = (name) => ({ name, exact: true });

async function createWithApi(server, path, body) {
  const response = await fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${server.secret}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  assert.equal(response.status, 201, `POST ${path}: ${await response.clone().text()}`);
  return response.json();
}

// A copy button reads "Copy link" and is named "Copy link to a.txt"; the others add the row's name.
const NAME_PREFIX = { 'Copy link': 'Copy link to' };

/** Each row has one button per action named "{action} {row}", and no button is named only "{action}". */
async function assertRowButtons(page, rows, actions) {
  for (const row of rows) {
    for (const action of actions) {
      const name = `${NAME_PREFIX[action] ?? action} ${row}`;
      assert.equal(await page.getByRole('button', exactly(name)).count(), 1, `"${name}" on ${page.url()}`);
    }
  }
  for (const action of actions) {
    assert.equal(await page.getByRole('button', exactly(action)).count(), 0, `a bare "${action}" on ${page.url()}`);
  }
}

test('each row button on the files page is named for its file', { timeout: TEST_TIMEOUT }, async (t) => {
  const { server, page, problems } = await openApp(t);
  await uploadWithApi(server, 'a.txt', 'first\n');
  await uploadWithApi(server, 'b.txt', 'second\n');

  await page.goto('/files');
  await assertRowButtons(page, ['a.txt', 'b.txt'], ['Copy link', 'Delete']);
  for (const name of ['a.txt', 'b.txt']) {
    assert.equal(await page.getByRole('link', exactly(`Open ${name}`)).count(), 1, `Open ${name}`);
    assert.equal(await page.getByRole('link', exactly(`Edit ${name}`)).count(), 1, `Edit ${name}`);
  }

  // The name leads to the right row: deleting a.txt by its name keeps b.txt.
  page.once('dialog', (dialog) => dialog.accept());
  await page.getByRole('button', exactly('Delete a.txt')).click();
  await page.getByRole('button', exactly('Delete a.txt')).waitFor({ state: 'detached' });
  await page.getByRole('button', exactly('Delete b.txt')).waitFor(); // b.txt stays

  assertNoProblems(problems);
});

test('a finished upload row names its file on the upload page', { timeout: TEST_TIMEOUT }, async (t) => {
  const { page, problems } = await openApp(t);
  await page.setInputFiles('#file-input', { name: 'c.txt', mimeType: 'text/plain', buffer: Buffer.from('third\n') });
  const [row] = await waitForUploads(page, 1);
  assert.equal(row.status, 'Done');
  await assertRowButtons(page, ['c.txt'], ['Copy link']);
  assert.equal(await page.getByRole('link', exactly('Details of c.txt')).count(), 1);
  assertNoProblems(problems);
});

test('each row button on the guest links page is named for its link', { timeout: TEST_TIMEOUT }, async (t) => {
  const { server, page, problems } = await openApp(t);
  await createWithApi(server, '/api/guest-links', { label: 'Scans from Ana' });
  await createWithApi(server, '/api/guest-links', { label: 'Photos from Ben' });

  await page.goto('/guest-links');
  await assertRowButtons(page, ['Scans from Ana', 'Photos from Ben'], ['Copy link', 'Disable', 'Delete']);

  await page.getByRole('button', exactly('Disable Scans from Ana')).click();
  await page.getByRole('button', exactly('Enable Scans from Ana')).waitFor();
  assert.equal(await page.getByRole('button', exactly('Disable Photos from Ben')).count(), 1, 'the other link stays enabled');

  assertNoProblems(problems);
});

test('each row button on the tokens page is named for its token', { timeout: TEST_TIMEOUT }, async (t) => {
  const { server, page, problems } = await openApp(t);
  await createWithApi(server, '/api/tokens', { label: 'nightly backup' });
  await createWithApi(server, '/api/tokens', { label: 'photo sync' });

  await page.goto('/tokens');
  await assertRowButtons(page, ['nightly backup', 'photo sync'], ['Revoke']);

  page.once('dialog', (dialog) => dialog.accept());
  await page.getByRole('button', exactly('Revoke nightly backup')).click();
  await page.getByRole('button', exactly('Revoke nightly backup')).waitFor({ state: 'detached' });
  await page.getByRole('button', exactly('Revoke photo sync')).waitFor(); // the other token stays

  assertNoProblems(problems);
});
