// Journey: an owner who uses only the keyboard signs in, uploads a file and copies its link.

import assert from 'node:assert/strict';
import test from 'node:test';
import { TEST_TIMEOUT, assertNoProblems, openApp, waitForUploads } from '../helpers.mjs';

const focused = (page) =>
  page.evaluate(() => {
    const el = document.activeElement;
    return { id: el?.id ?? '', tag: el?.tagName ?? '', cls: el?.className ?? '', text: el?.textContent?.trim() ?? '' };
  });

/** Presses Tab until `matches(focused)` holds; fails after `limit` presses. */
async function tabTo(page, matches, what, limit = 40) {
  for (let i = 0; i < limit; i += 1) {
    await page.keyboard.press('Tab');
    if (matches(await focused(page))) return;
  }
  assert.fail(`Tab never reached ${what}`);
}

test('keyboard only: sign in, choose files with Enter and Space, copy the link', { timeout: TEST_TIMEOUT }, async (t) => {
  const { server, page, context, problems } = await openApp(t, { signedIn: false });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
  // Intercepting the file dialog is switched on asynchronously; doing it before any key press
  // means the first Enter cannot open a native dialog that the test never sees.
  page.on('filechooser', () => {});

  await page.goto('/login');
  await tabTo(page, (el) => el.id === 'secret', 'the secret field');
  await page.keyboard.type(server.secret);
  await Promise.all([page.waitForURL(`${server.url}/`), page.keyboard.press('Enter')]);

  // The first Tab reaches the skip link, and it is visible when focused.
  await page.keyboard.press('Tab');
  const skip = await focused(page);
  assert.match(skip.cls, /skip-link/, `first stop is the skip link, got ${JSON.stringify(skip)}`);
  const box = await page.locator('.skip-link').boundingBox();
  assert.ok(box && box.y >= 0 && box.width > 1 && box.height > 1, `skip link on screen: ${JSON.stringify(box)}`);
  const ring = await page.evaluate(() => getComputedStyle(document.activeElement).outlineStyle);
  assert.notEqual(ring, 'none', 'a visible focus ring');

  await tabTo(page, (el) => el.id === 'choose-files', 'the choose-files button');
  const [chooser] = await Promise.all([page.waitForEvent('filechooser'), page.keyboard.press('Enter')]);
  assert.equal(chooser.isMultiple(), true);
  await chooser.setFiles({ name: 'typed.txt', mimeType: 'text/plain', buffer: Buffer.from('chosen with Enter\n') });
  let rows = await waitForUploads(page, 1);
  assert.equal(rows[0].status, 'Done');

  // Space works as well; the focus stayed on the button.
  assert.equal((await focused(page)).id, 'choose-files', 'focus stays on the button after choosing');
  const [again] = await Promise.all([page.waitForEvent('filechooser'), page.keyboard.press('Space')]);
  await again.setFiles({ name: 'spaced.txt', mimeType: 'text/plain', buffer: Buffer.from('chosen with Space\n') });
  rows = await waitForUploads(page, 2);
  assert.ok(rows.every((row) => row.status === 'Done'), JSON.stringify(rows));

  // The copy button is reachable and works from the keyboard.
  await tabTo(page, (el) => /copy-link/.test(el.cls), 'a copy-link button');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.activeElement?.textContent === 'Copied');
  const copied = await page.evaluate(() => navigator.clipboard.readText());
  assert.ok(rows.some((row) => row.link === copied), `clipboard holds a link: ${copied}`);

  assertNoProblems(problems);
});
