// Journey: the owner renames a file and adds a note on its page, then deletes it.

import assert from 'node:assert/strict';
import test from 'node:test';
import { TEST_TIMEOUT, assertNoProblems, openApp, uploadWithApi } from '../helpers.mjs';

test('the file page edits the name and note, and deletes after a confirmation', { timeout: TEST_TIMEOUT }, async (t) => {
  const { server, page, problems } = await openApp(t);
  const file = await uploadWithApi(server, 'draft.txt', 'first draft\n');
  const other = await uploadWithApi(server, 'keep-me.txt', 'stays\n');

  await page.goto(`/files/${file.id}`);
  assert.equal((await page.textContent('h1')).trim(), 'draft.txt');
  await page.fill('#edit-filename', 'final version.txt');
  await page.fill('#edit-note', 'Checked by Ana');
  await Promise.all([
    page.waitForURL(`${server.url}/files/${file.id}`),
    page.click('#edit-form button:not([type=button])'),
  ]);
  assert.equal((await page.textContent('h1')).trim(), 'final version.txt');
  assert.match(await page.textContent('main'), /Checked by Ana/);
  assert.equal(await page.inputValue('#edit-filename'), 'final version.txt');
  assert.equal(await page.inputValue('#edit-note'), 'Checked by Ana');

  await page.goto('/files');
  const row = page.locator(`#files-table tbody tr[data-id="${file.id}"]`);
  assert.match(await row.locator('td.name').textContent(), /final version\.txt/);

  // Saying no to the question keeps the file.
  const questions = [];
  page.once('dialog', (dialog) => {
    questions.push(dialog.message());
    dialog.dismiss();
  });
  await row.locator('form.delete-form button').click();
  await page.waitForTimeout(300);
  assert.match(questions[0] ?? '', /final version\.txt/);
  assert.equal(await row.count(), 1, 'still listed after cancelling');

  // Yes on the file page deletes it and lands on the list.
  await page.goto(`/files/${file.id}`);
  page.once('dialog', (dialog) => dialog.accept());
  await Promise.all([page.waitForURL(/\/files$/), page.click('#delete-form button')]);
  assert.equal(await page.locator(`tr[data-id="${file.id}"]`).count(), 0, 'gone from /files');
  assert.equal(await page.locator(`tr[data-id="${other.id}"]`).count(), 1, 'the other file stays');
  const gone = await fetch(file.url);
  assert.equal(gone.status, 404, 'its link is dead');

  assertNoProblems(problems);
});
