// Journeys: an admin clicks "Sign in with Mock" on the sign-in page, passes the provider's form
// (PyPI's oidc-provider-mock on loopback, in an admin group), and lands on the upload page signed in;
// a member's first sign-in (sign-up on) makes their own account, which their account page shows
// with the identity linked to it.

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

/** A client registered at the mock for a blobdrop at `publicUrl`, and these users (sub -> claims). */
async function registerAt(issuer, publicUrl, users) {
  const registered = await fetch(`${issuer}/oauth2/clients`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ redirect_uris: [`${publicUrl}/login/oidc/callback`] }),
  });
  assert.equal(registered.status, 201);
  for (const [sub, claims] of Object.entries(users)) {
    const user = await fetch(`${issuer}/users/${sub}`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(claims),
    });
    assert.equal(user.status, 204);
  }
  return registered.json();
}

/** blobdrop signing in with the mock (and `env` besides), and a browser that is not signed in. */
async function appWithMock(t, users, env) {
  const issuer = await startMock(t);
  const port = await freePort();
  const publicUrl = `http://127.0.0.1:${port}`;
  const client = await registerAt(issuer, publicUrl, users);
  const server = await startServer({
    port,
    env: {
      BLOBDROP_PUBLIC_URL: publicUrl,
      BLOBDROP_OIDC_ISSUER: issuer,
      BLOBDROP_OIDC_CLIENT_ID: client.client_id,
      BLOBDROP_OIDC_CLIENT_SECRET: client.client_secret,
      BLOBDROP_OIDC_NAME: 'Mock',
      ...env,
    },
  });
  t.after(() => server.stop());
  const { page, context, problems } = await openApp(t, { signedIn: false, server });
  // The mock's page links a style sheet on a CDN: nothing leaves loopback.
  await context.route(/^https?:\/\/(?!127\.0\.0\.1[:/])/, (route) => route.abort());
  return { issuer, publicUrl, page, context, problems };
}

/** Clicks the sign-in button and passes the mock's form as `sub`: back on blobdrop, at `landing`. */
async function signInWithMock(page, issuer, publicUrl, sub, landing) {
  await page.goto('/login');
  await Promise.all([page.waitForURL(`${issuer}/oauth2/authorize?**`), page.click('text=Sign in with Mock')]);
  await page.fill('input[name=sub]', sub);
  await Promise.all([page.waitForURL(`${publicUrl}${landing}`), page.click('button:has-text("Authorize")')]);
}

test('Sign in with Mock passes the provider and lands signed in', { timeout: TEST_TIMEOUT }, async (t) => {
  const users = { alice: { groups: ['blobdrop-admins'], email: 'alice@example.com' } };
  const { issuer, publicUrl, page, context, problems } =
    await appWithMock(t, users, { BLOBDROP_OIDC_ADMIN_GROUPS: 'blobdrop-admins' });

  await signInWithMock(page, issuer, publicUrl, 'alice', '/');
  await page.locator('#upload-form').waitFor();
  const session = (await context.cookies()).find((c) => c.name === 'blobdrop_session');
  assert.ok(session, 'a session cookie is set');
  assert.equal(session.sameSite, 'Strict');
  assert.equal(await page.locator('header nav a[href="/files"]').count(), 1, 'signed in: the navigation shows');
  const flow = (await context.cookies()).find((c) => c.name === 'blobdrop_oidc');
  assert.equal(flow, undefined, 'the flow cookie is gone');

  assertNoProblems(problems);
});

test("A member's first sign-in makes their own account, linked to their identity", { timeout: TEST_TIMEOUT }, async (t) => {
  const users = { 'carol-sub': { preferred_username: 'carol', email: 'carol@example.com', groups: ['staff'] } };
  const { issuer, publicUrl, page, context, problems } = await appWithMock(t, users, { BLOBDROP_OIDC_SIGN_UP: 'on' });

  // A member lands on the upload page, as everyone signed in does; her account page is hers.
  await signInWithMock(page, issuer, publicUrl, 'carol-sub', '/');
  assert.ok((await context.cookies()).find((c) => c.name === 'blobdrop_session'), 'a session cookie is set');
  assert.equal(await page.locator('#file-input').count(), 1, 'the upload page');
  await page.goto('/account');
  assert.equal(await page.locator('#account-name').textContent(), 'carol');
  assert.equal(await page.locator('#account-role').textContent(), 'member');
  assert.equal(await page.locator('#linked-identities .linked-subject').textContent(), 'carol-sub');
  assert.equal(await page.locator('#linked-identities .linked-issuer').textContent(), issuer);
  // A member's session: the admin's pages are not hers.
  const accounts = await page.goto('/accounts');
  assert.equal(accounts.status(), 403);

  assertNoProblems(problems);
});
