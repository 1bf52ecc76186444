// Journey: the owner pastes text onto the page and gets a link to a .txt file holding it.

import assert from 'node:assert/strict';
import test from 'node:test';
import { TEST_TIMEOUT, assertNoProblems, fetchBytes, openApp, waitForUploads } from '../helpers.mjs';

const paste = (page, text, selector = 'main') =>
  page.evaluate(
    ([content, where]) => {
      const data = new DataTransfer();
      data.setData('text/plain', content);
      const target = document.querySelector(where);
      target.focus?.();
      target.dispatchEvent(new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }));
    },
    [text, selector],
  );

test('pasted text becomes a pasted-DATE.txt upload with the same content', { timeout: TEST_TIMEOUT }, async (t) => {
  const { page, problems } = await openApp(t);
  const text = 'Pasted notes: héllo wörld ✓\nsecond line\n';

  await paste(page, text);
  const [row] = await waitForUploads(page, 1);
  assert.equal(row.status, 'Done');
  assert.match(row.name, /^pasted-\d{4}-\d{2}-\d{2}-\d{6}\.txt$/);
  const stored = await fetchBytes(row.link);
  assert.equal(stored.toString('utf8'), text);

  // Text pasted into the note is typing, not a new upload.
  await paste(page, 'not an upload', '#note');
  await page.waitForTimeout(500);
  assert.equal(await page.locator('#uploads li.upload').count(), 1);

  // A pasted image is uploaded as pasted-DATE.png.
  await page.evaluate(async () => {
    const canvas = document.createElement('canvas');
    canvas.width = 8;
    canvas.height = 8;
    canvas.getContext('2d').fillRect(0, 0, 4, 4);
    const blob = await new Promise((resolve) => canvas.toBlob(resolve, 'image/png'));
    const data = new DataTransfer();
    data.items.add(new File([blob], 'image.png', { type: 'image/png' }));
    document.querySelector('main').dispatchEvent(new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }));
  });
  const rows = await waitForUploads(page, 2);
  const image = rows.find((r) => r.name.endsWith('.png'));
  assert.ok(image, 'the image is listed');
  assert.match(image.name, /^pasted-\d{4}-\d{2}-\d{2}-\d{6}\.png$/);
  assert.equal(image.status, 'Done');
  const png = await fetchBytes(image.link);
  assert.deepEqual([...png.subarray(1, 4)], [...Buffer.from('PNG')]);

  assertNoProblems(problems);
});
