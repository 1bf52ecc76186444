// Journey: the owner adds a webhook on the settings page, copies its secret from the one page that
// shows it, sends a test event that a real receiver gets signed, sees the delivery, and removes it.

import assert from 'node:assert/strict';
import { createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import test from 'node:test';
import { TEST_TIMEOUT, assertNoProblems, openApp } from '../helpers.mjs';

/** A receiver on 127.0.0.1 that records each request and answers 200. */
async function startReceiver(t) {
  const received = [];
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks) });
      res.end();
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => server.close());
  return { url: `http://127.0.0.1:${server.address().port}/hook`, received };
}

/** GitHub's way: the HMAC-SHA256 of the raw body, compared in constant time. */
function signedWith(secret, delivery) {
  const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(delivery.body).digest('hex')}`);
  const sent = Buffer.from(delivery.headers['x-blobdrop-signature-256'] ?? '');
  return sent.length === expected.length && timingSafeEqual(sent, expected);
}

test('a webhook added on the settings page gets a signed test event and shows its delivery', { timeout: TEST_TIMEOUT }, async (t) => {
  const { server, page, problems } = await openApp(t);
  const receiver = await startReceiver(t);

  await page.goto('/settings');
  await page.fill('#webhook-url', receiver.url);
  await page.uncheck('#webhook-form input[value="file.downloaded"]');
  await page.click('#webhook-form button[type=submit]');
  await page.waitForSelector('#new-webhook:not([hidden])');
  const secret = (await page.textContent('#new-webhook-secret')).trim();
  assert.equal(secret.length, 43);
  const hook = page.locator('article.webhook', { hasText: receiver.url });
  assert.equal(await hook.count(), 1);
  assert.doesNotMatch(await hook.textContent(), /file\.downloaded/);

  await hook.locator('button.webhook-test').click();
  await page.waitForSelector('article.webhook tr.delivery-delivered');
  assert.match(await hook.locator('tr.delivery-delivered').textContent(), /webhook\.test/);
  assert.equal(receiver.received.length, 1);
  assert.equal(receiver.received[0].headers['x-blobdrop-event'], 'webhook.test');
  assert.ok(signedWith(secret, receiver.received[0]), 'signed with the secret shown once');

  await page.reload();
  assert.ok(!(await page.content()).includes(secret), 'never shown again');
  page.once('dialog', (dialog) => dialog.accept());
  await Promise.all([page.waitForLoadState('load'), hook.locator('button.webhook-delete').click()]);
  await page.waitForFunction(() => document.querySelectorAll('article.webhook').length === 0);
  const listed = await fetch(`${server.url}/api/webhooks`, { headers: { Authorization: `Bearer ${server.secret}` } });
  assert.deepEqual(await listed.json(), []);

  assertNoProblems(problems);
});
