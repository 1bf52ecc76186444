// Journey: someone uploads a hostile HTML page; opening its link must not run it as the app.

import assert from 'node:assert/strict';
import test from 'node:test';
import { TEST_TIMEOUT, assertNoProblems, idOf, openApp, waitForUploads } from '../helpers.mjs';

const HOSTILE = `<!doctype html><title>evil</title><h1>evil</h1>
<script>
  try { localStorage.setItem('pwned', 'yes'); } catch (e) {}
  try { document.cookie = 'pwned=yes; path=/'; } catch (e) {}
  try { if (window.opener) window.opener.document.title = 'pwned'; } catch (e) {}
  try { if (window.parent !== window) window.parent.document.title = 'pwned'; } catch (e) {}
  try { fetch('/api/files').then(r => r.text()).then(t => localStorage.setItem('stolen', t)); } catch (e) {}
  alert('pwned');
</script>`;

test('an uploaded HTML page never runs in the app origin', { timeout: TEST_TIMEOUT }, async (t) => {
  const { server, page, context, problems } = await openApp(t);
  const dialogs = [];
  context.on('page', (popup) => popup.on('dialog', (d) => { dialogs.push(d.message()); d.dismiss(); }));
  page.on('dialog', (d) => { dialogs.push(d.message()); d.dismiss(); });

  await page.setInputFiles('#file-input', { name: 'evil.html', mimeType: 'text/html', buffer: Buffer.from(HOSTILE) });
  const [row] = await waitForUploads(page, 1);
  assert.equal(row.status, 'Done');

  // What the server promises for active content: an attachment, sandboxed, never sniffed.
  const head = await fetch(row.link);
  assert.match(head.headers.get('content-disposition') ?? '', /^attachment/);
  assert.match(head.headers.get('content-security-policy') ?? '', /sandbox/);
  assert.equal(head.headers.get('x-content-type-options'), 'nosniff');

  // Following the link (same tab, and a new tab the way a user would open it) only downloads.
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('a.upload-link')]);
  assert.equal(download.suggestedFilename(), 'evil.html');
  const popup = await context.newPage();
  popup.on('dialog', (d) => { dialogs.push(d.message()); d.dismiss(); });
  const downloads = [];
  popup.on('download', (d) => downloads.push(d));
  for (const url of [row.link, `${row.link}?download=0`]) {
    await popup.goto(url).catch((error) => assert.match(error.message, /Download is starting|net::ERR_ABORTED/));
  }
  await popup.waitForTimeout(300);
  assert.ok(downloads.length >= 1, 'opening the link downloads the file');

  // The file page must not preview it live either.
  await page.goto(`/files/${idOf(row.link)}`);
  await page.waitForTimeout(500);
  const frames = page.frames().filter((frame) => frame !== page.mainFrame());
  for (const frame of frames) {
    const sandbox = await (await frame.frameElement()).getAttribute('sandbox');
    assert.notEqual(sandbox, null, `a preview frame of ${frame.url()} must be sandboxed`);
  }

  assert.equal(await page.evaluate(() => localStorage.getItem('pwned')), null, 'app localStorage untouched');
  assert.equal(await page.evaluate(() => localStorage.getItem('stolen')), null, 'nothing read through the session');
  assert.ok(!(await context.cookies(server.url)).some((c) => c.name === 'pwned'), 'no cookie set');
  assert.notEqual(await page.title(), 'pwned');
  assert.deepEqual(dialogs, [], 'the script never ran');

  assertNoProblems(problems);
});
