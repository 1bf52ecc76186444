// Journey: on a 390 px phone, a recipient downloads single files from a share, a guest gets the
// link of what they sent, and the owner downloads from the files page and a file's page; every
// download link is in reach without scrolling sideways, and clicking it gives the same bytes.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import test from 'node:test';
import { ARTIFACTS, TEST_TIMEOUT, assertNoProblems, openApp, sha256, uploadWithApi, waitForUploads, watchPage } from '../helpers.mjs';

const PHONE = { width: 390, height: 844 };
const OUT = path.join(ARTIFACTS, 'screenshots');

/**
 * The link is visible, wholly on the screen and inside every box that clips it, measured before
 * anything scrolls (a link that a table pushed off to the side of a scroll box is not in reach),
 * and the browser would click it (visible, stable, enabled, not covered).
 */
async function assertInReach(link, what) {
  const reach = await link.evaluate((element) => {
    const box = element.getBoundingClientRect();
    const clippedBy = [];
    for (let box2 = element.parentElement; box2; box2 = box2.parentElement) {
      const style = getComputedStyle(box2);
      if (box2.scrollLeft > 0) clippedBy.push(`${box2.tagName} scrolled sideways`);
      if (style.overflowX !== 'visible') {
        const clip = box2.getBoundingClientRect();
        if (box.left < clip.left - 0.5 || box.right > clip.right + 0.5) clippedBy.push(`${box2.tagName}.${box2.className}`);
      }
    }
    return {
      left: box.left,
      right: box.right,
      width: box.width,
      height: box.height,
      screen: window.innerWidth,
      pageWider: document.documentElement.scrollWidth - window.innerWidth,
      clippedBy,
    };
  });
  assert.ok(reach.width > 0 && reach.height > 0, `${what} is visible: ${JSON.stringify(reach)}`);
  assert.ok(reach.left >= 0 && reach.right <= reach.screen, `${what} is on the ${reach.screen} px screen: ${JSON.stringify(reach)}`);
  assert.deepEqual(reach.clippedBy, [], `${what} is not cut off`);
  assert.ok(reach.pageWider <= 1, `the page does not scroll sideways (${reach.pageWider} px)`);
  await link.click({ trial: true });
}

/** Clicks the link as a person would and returns the downloaded bytes. */
async function download(page, link) {
  const [file] = await Promise.all([page.waitForEvent('download'), link.click()]);
  return readFile(await file.path());
}

async function shoot(page, name) {
  await mkdir(OUT, { recursive: true });
  for (const colorScheme of ['light', 'dark']) {
    await page.emulateMedia({ colorScheme });
    await page.screenshot({ path: path.join(OUT, `phone-${name}-${colorScheme}.png`), fullPage: true, animations: 'disabled' });
  }
  await page.emulateMedia({ colorScheme: 'light' });
}

test('at 390 px every download link of a share, the files page, a file page and a guest upload is in reach', { timeout: TEST_TIMEOUT * 2 }, async (t) => {
  const { server, browser, page, problems } = await openApp(t, { viewport: PHONE });
  const bodies = {
    'quarterly-report-with-a-long-name-2026.bin': randomBytes(150_000),
    'photo.bin': randomBytes(70_000),
    'notes.txt': Buffer.from('Agenda\n1. Budget\n'),
  };
  const uploaded = {};
  for (const [name, body] of Object.entries(bodies)) uploaded[name] = await uploadWithApi(server, name, body, { 'Max-Days': '7' });

  const created = await fetch(`${server.url}/api/shares`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${server.secret}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ name: 'Board meeting, March', files: Object.values(uploaded).map((file) => file.id) }),
  });
  assert.equal(created.status, 201, await created.clone().text());
  const share = await created.json();

  // A recipient on a phone, without a session.
  const recipientContext = await browser.newContext({ baseURL: server.url, viewport: PHONE, acceptDownloads: true });
  t.after(() => recipientContext.close().catch(() => {}));
  const recipient = await recipientContext.newPage();
  const recipientProblems = watchPage(recipient);
  await recipient.goto(share.url);
  for (const name of Object.keys(bodies)) {
    await assertInReach(recipient.getByRole('link', { name: `Download ${name}` }), `the share page's link to ${name}`);
  }
  const fromShare = await download(recipient, recipient.getByRole('link', { name: 'Download photo.bin' }));
  assert.equal(sha256(fromShare), sha256(bodies['photo.bin']));
  // The curl line is a whole command with the full URL, and a button copies it.
  const command = (await recipient.textContent('#curl-command')).trim();
  assert.equal(command, `curl -C - -o 'Board meeting, March.zip' ${share.url}/zip`);
  assert.equal(await recipient.getAttribute('#curl-line button.copy-link', 'data-url'), command);
  await assertInReach(recipient.locator('#curl-line button.copy-link'), 'the copy button of the curl line');
  await assertInReach(recipient.locator('#download-all'), 'Download all');
  await shoot(recipient, 'share');

  // The owner's files page: rows are cards, each with its download link.
  await page.goto('/files');
  for (const name of Object.keys(bodies)) {
    await assertInReach(page.getByRole('link', { name: `Open ${name}` }), `the files page's link to ${name}`);
  }
  const fromList = await download(page, page.getByRole('link', { name: 'Open quarterly-report-with-a-long-name-2026.bin' }));
  assert.equal(sha256(fromList), sha256(bodies['quarterly-report-with-a-long-name-2026.bin']));
  await shoot(page, 'files');

  // A file's page.
  await page.goto(`/files/${uploaded['photo.bin'].id}`);
  const fileDownload = page.locator('main a.button', { hasText: 'Download' });
  await assertInReach(fileDownload, "the file page's Download");
  assert.equal(sha256(await download(page, fileDownload)), sha256(bodies['photo.bin']));
  await shoot(page, 'file');

  // A guest on a phone sends a file and gets its link.
  const link = await fetch(`${server.url}/api/guest-links`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${server.secret}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ label: 'Scans' }),
  });
  assert.equal(link.status, 201);
  const guestLink = await link.json();
  const guest = await recipientContext.newPage();
  const guestProblems = watchPage(guest);
  await guest.goto(guestLink.url);
  const scan = randomBytes(40_000);
  await guest.setInputFiles('#file-input', [{ name: 'scan-of-the-signed-contract-page-1.bin', mimeType: 'application/octet-stream', buffer: scan }]);
  const [sent] = await waitForUploads(guest, 1);
  assert.equal(sent.status, 'Done');
  const guestLinkToFile = guest.locator('#uploads a.upload-link');
  await assertInReach(guestLinkToFile, "the guest's link to the file");
  assert.equal(sha256(await download(guest, guestLinkToFile)), sha256(scan));
  await shoot(guest, 'guest');

  assertNoProblems([...problems, ...recipientProblems, ...guestProblems]);
});

test('a seven-day expiry reads "in 7 days" right after the upload, the exact time in its tooltip', { timeout: TEST_TIMEOUT }, async (t) => {
  const { server, page, problems } = await openApp(t);
  const file = await uploadWithApi(server, 'week.txt', 'a week', { 'Max-Days': '7' });
  await page.goto('/files');
  const expiry = page.locator(`#files-table tr[data-id="${file.id}"] td.expires time`);
  assert.equal((await expiry.textContent()).trim(), 'in 7 days');
  const datetime = await expiry.getAttribute('datetime');
  assert.equal(new Date(datetime).toISOString().replace('.000Z', 'Z'), file.expires_at);
  assert.match(await expiry.getAttribute('title'), /^\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC$/);
  await page.goto(`/files/${file.id}`);
  assert.equal((await page.locator('#file-meta time').textContent()).trim(), 'in 7 days');
  assertNoProblems(problems);
});
