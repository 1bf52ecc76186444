// Journey: the owner clicks "Sign in with Mock" on the sign-in page, passes the provider's form
// (PyPI's oidc-provider-mock on loopback, in an owner group), and lands on the upload page signed in.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import test from 'node:test';
import { fileURLToPath } from 'node:url';
import { TEST_TIMEOUT, assertNoProblems, freePort, openApp, startServer } from '../helpers.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const MOCK = path.resolve(here, '../../tests/api/oidc_mock.py');
const MOCK_START = 30_000;

/** oidc-provider-mock on a port it picks and prints; killed by its pid when the test ends. */
async function startMock(t) {
  const child = spawn('python3', [MOCK], { stdio: ['ignore', 'pipe', 'inherit'] });
  t.after(() => child.kill('SIGKILL'));
  const port = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`oidc-provider-mock printed no port within ${MOCK_START} ms`)), MOCK_START);
    let text = '';
    child.stdout.on('data', (chunk) => {
      text += chunk.toString();
      if (text.includes('\n')) {
        clearTimeout(timer);
        resolve(Number(text.split('\n')[0].trim()));
      }
    });
    child.on('exit', (code) => reject(new Error(`oidc-provider-mock exited (${code})`)));
  });
  return `http://127.0.0.1:${port}`;
}

test('Sign in with Mock passes the provider and lands signed in', { timeout: TEST_TIMEOUT }, async (t) => {
  const issuer = await startMock(t);
  const port = await freePort();
  const publicUrl = `http://127.0.0.1:${port}`;
  const registered = await fetch(`${issuer}/oauth2/clients`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ redirect_uris: [`${publicUrl}/login/oidc/callback`] }),
  });
  assert.equal(registered.status, 201);
  const client = await registered.json();
  const user = await fetch(`${issuer}/users/alice`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ groups: ['blobdrop-admins'], email: 'alice@example.com' }),
  });
  assert.equal(user.status, 204);

  const server = await startServer({
    port,
    env: {
      BLOBDROP_PUBLIC_URL: publicUrl,
      BLOBDROP_OIDC_ISSUER: issuer,
      BLOBDROP_OIDC_CLIENT_ID: client.client_id,
      BLOBDROP_OIDC_CLIENT_SECRET: client.client_secret,
      BLOBDROP_OIDC_NAME: 'Mock',
      BLOBDROP_OIDC_OWNER_GROUPS: 'blobdrop-admins',
    },
  });
  t.after(() => server.stop());
  const { page, context, problems } = await openApp(t, { signedIn: false, server });
  // The mock's page links a style sheet on a CDN: nothing leaves loopback.
  await context.route(/^https?:\/\/(?!127\.0\.0\.1[:/])/, (route) => route.abort());

  await page.goto('/login');
  await Promise.all([page.waitForURL(`${issuer}/oauth2/authorize?**`), page.click('text=Sign in with Mock')]);
  await page.fill('input[name=sub]', 'alice');
  await Promise.all([page.waitForURL(`${publicUrl}/`), page.click('button:has-text("Authorize")')]);
  await page.locator('#upload-form').waitFor();
  const session = (await context.cookies()).find((c) => c.name === 'blobdrop_session');
  assert.ok(session, 'a session cookie is set');
  assert.equal(session.sameSite, 'Strict');
  assert.equal(await page.locator('header nav a[href="/files"]').count(), 1, 'signed in: the navigation shows');
  const flow = (await context.cookies()).find((c) => c.name === 'blobdrop_oidc');
  assert.equal(flow, undefined, 'the flow cookie is gone');

  assertNoProblems(problems);
});
