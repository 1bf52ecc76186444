// Fixtures shared by the specs: a real blobdrop server per test (own port, own database) and a
// real headless Chromium with a fresh profile. Everything stays on loopback.

import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import assert from 'node:assert/strict';
import { chromium } from 'playwright-core';

const here = path.dirname(fileURLToPath(import.meta.url));

export const BIN = path.resolve(here, process.env.BLOBDROP_BIN ?? '../target/debug/blobdrop');
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const SECRET = 'browser-test-secret-0123456789';
export const ARTIFACTS = path.resolve(here, '../test-artifacts');

/** Every spec's own ceiling, so a hung browser or server fails the run instead of stalling it. */
export const TEST_TIMEOUT = 90_000;
const ACTION_TIMEOUT = 15_000;
const STARTUP_TIMEOUT = 20_000;

export async function freePort() {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.unref();
    probe.on('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Starts the real binary with a temporary database; resolves once /healthz answers 200. `port`
 * is for a spec that must know it first (a public URL naming it); otherwise a free one is picked.
 */
export async function startServer({ secret = SECRET, env = {}, port: given } = {}) {
  const dir = await mkdtemp(path.join(tmpdir(), 'blobdrop-browser-'));
  const port = given ?? (await freePort());
  const url = `http://127.0.0.1:${port}`;
  const output = [];
  const child = spawn(BIN, [], {
    env: {
      ...process.env,
      BLOBDROP_DB: path.join(dir, 'b.db'),
      BLOBDROP_PORT: String(port),
      BLOBDROP_BIND: '127.0.0.1',
      BLOBDROP_SHARED_SECRET: secret,
      RUST_LOG: process.env.RUST_LOG ?? 'warn',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const keep = (chunk) => {
    output.push(...chunk.toString().split('\n').filter(Boolean));
    output.splice(0, Math.max(0, output.length - 200));
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  let exited = null;
  const exit = new Promise((resolve) => {
    child.on('exit', (code, signal) => {
      exited = { code, signal };
      resolve(exited);
    });
    child.on('error', (error) => {
      exited = { error };
      resolve(exited);
    });
  });

  const server = {
    url,
    port,
    secret,
    dir,
    log: () => output.join('\n'),
    async stop() {
      if (!exited) {
        child.kill('SIGTERM');
        const done = await Promise.race([exit, sleep(10_000).then(() => null)]);
        if (!done) {
          child.kill('SIGKILL');
          await exit;
        }
      }
      await rm(dir, { recursive: true, force: true });
    },
  };

  const deadline = Date.now() + STARTUP_TIMEOUT;
  while (Date.now() < deadline) {
    if (exited) {
      await rm(dir, { recursive: true, force: true });
      throw new Error(`blobdrop (${BIN}) exited at start: ${JSON.stringify(exited)}\n${server.log()}`);
    }
    try {
      const response = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(1000) });
      if (response.ok) return server;
    } catch {
      // Not listening yet.
    }
    await sleep(100);
  }
  await server.stop();
  throw new Error(`blobdrop did not answer /healthz within ${STARTUP_TIMEOUT} ms\n${server.log()}`);
}

/** A fresh Chromium (its own temporary profile) with only the flags a sealed test machine needs. */
export async function launchBrowser() {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    timeout: STARTUP_TIMEOUT,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/**
 * Server, browser, context and page for one test, all torn down by t.after. Page errors and CSP
 * violations are collected so each test can assert the front end ran cleanly.
 */
export async function openApp(t, { signedIn = true, viewport = { width: 1280, height: 800 }, colorScheme = 'light', server: given, serverEnv = {} } = {}) {
  const server = given ?? (await startServer({ env: serverEnv }));
  const browser = await launchBrowser().catch(async (error) => {
    if (!given) await server.stop();
    throw error;
  });
  t.after(async () => {
    await browser.close().catch(() => {});
    if (!given) await server.stop();
  });
  const context = await browser.newContext({ baseURL: server.url, viewport, colorScheme, acceptDownloads: true });
  context.setDefaultTimeout(ACTION_TIMEOUT);
  context.setDefaultNavigationTimeout(ACTION_TIMEOUT);
  if (process.env.BROWSER_TESTS_LOCAL_STATIC === '1') {
    await serveLocalStatic(context);
  } else {
    await assertAssetsServed(server);
  }
  const page = await context.newPage();
  const problems = watchPage(page);
  if (signedIn) await signIn(page, server);
  return { server, browser, context, page, problems };
}

/** Without its script and style sheet every journey fails slowly; say why at once instead. */
async function assertAssetsServed(server) {
  for (const [name, type] of [['app.js', /^(text|application)\/javascript/], ['style.css', /^text\/css/]]) {
    const response = await fetch(`${server.url}/static/${name}`, { signal: AbortSignal.timeout(ACTION_TIMEOUT) });
    assert.equal(response.status, 200, `GET /static/${name}`);
    assert.match(response.headers.get('content-type') ?? '', type, `Content-Type of /static/${name}`);
  }
}

/**
 * For working on static/ without rebuilding the binary after each edit: answers /static/* from
 * the working tree. Never on by default, so the real runs test what the binary serves.
 */
async function serveLocalStatic(context) {
  const types = { '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8' };
  const root = path.resolve(here, '../static');
  // /static/{name}, /static/js/{name}, or either under a version segment as the pages link them.
  await context.route(/\/static\/(?:[^/]+\/)?(?:js\/)?[^/]+$/, async (route) => {
    const parts = new URL(route.request().url()).pathname.split('/').slice(2);
    if (parts.length > 1 && parts[0] !== 'js') parts.shift();
    const file = path.resolve(root, ...parts);
    try {
      if (!file.startsWith(`${root}${path.sep}`)) throw new Error('outside static/');
      const body = await readFile(file);
      await route.fulfill({ status: 200, body, contentType: types[path.extname(file)] ?? 'application/octet-stream' });
    } catch {
      await route.continue();
    }
  });
}

/** Uncaught exceptions and CSP refusals: both mean the front end is broken on that page. */
export function watchPage(page) {
  const problems = [];
  page.on('pageerror', (error) => problems.push(`pageerror on ${page.url()}: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error' && /Content Security Policy|Refused to/i.test(message.text())) {
      problems.push(`console on ${page.url()}: ${message.text()}`);
    }
  });
  return problems;
}

export async function signIn(page, server) {
  await page.goto('/login');
  await page.fill('#secret', server.secret);
  await Promise.all([page.waitForURL(`${server.url}/`), page.click('#login-form [type=submit]')]);
}

/** Uploads from Node with the owner's secret: for specs whose journey starts after an upload. */
export async function uploadWithApi(server, name, body, headers = {}) {
  const response = await fetch(`${server.url}/${encodeURIComponent(name)}`, {
    method: 'PUT',
    body,
    headers: { Authorization: `Bearer ${server.secret}`, Accept: 'application/json', ...headers },
    signal: AbortSignal.timeout(ACTION_TIMEOUT),
  });
  assert.equal(response.status, 201, `upload of ${name}: ${await response.clone().text()}`);
  return response.json();
}

/** Waits until the upload list holds `count` rows that all ended, and returns their states. */
export async function waitForUploads(page, count, { timeout = 30_000 } = {}) {
  await page.waitForFunction(
    (n) => {
      const rows = [...document.querySelectorAll('#uploads li.upload')];
      return rows.length >= n && rows.every((row) => ['done', 'failed', 'cancelled'].includes(row.dataset.state));
    },
    count,
    { timeout },
  );
  return page.$$eval('#uploads li.upload', (rows) =>
    rows.map((row) => ({
      name: row.querySelector('.upload-name')?.textContent,
      status: row.querySelector('.upload-status')?.textContent,
      percent: row.querySelector('.upload-percent')?.textContent,
      progress: row.querySelector('progress.upload-progress')?.value,
      link: row.querySelector('a.upload-link')?.href ?? null,
      linkText: row.querySelector('a.upload-link')?.textContent ?? null,
      copyUrl: row.querySelector('button.copy-link')?.dataset.url ?? null,
      qr: row.querySelector('img.upload-qr')?.getAttribute('src') ?? null,
    })),
  );
}

/** Reads a file back over plain HTTP, as anyone with the link would. */
export async function fetchBytes(url) {
  const response = await fetch(url, { signal: AbortSignal.timeout(ACTION_TIMEOUT) });
  assert.equal(response.status, 200, `GET ${url}`);
  return Buffer.from(await response.arrayBuffer());
}

export const sha256 = (bytes) => createHash('sha256').update(bytes).digest('hex');

export function assertNoProblems(problems) {
  assert.deepEqual(problems, [], 'the pages ran without script errors or CSP refusals');
}

/** The id in a link /f/ID/NAME or /f/ID. */
export function idOf(link) {
  const match = /\/f\/([^/?#]+)/.exec(new URL(link).pathname);
  assert.ok(match, `a file link: ${link}`);
  return match[1];
}
