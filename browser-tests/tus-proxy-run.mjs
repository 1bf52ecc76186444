// The resumable uploads' done-when run (issue 15): a file of --size bytes goes through nginx with
// `client_max_body_size 100m`, the connection is cut twice (the server killed with SIGKILL and
// started again on the same database, then nginx restarted), and the upload still finishes, from
// the command-line client (`blobdrop upload --chunk-size 50MiB`, run again after each cut, as a
// user would) and from the web page in headless Chromium (which retries by itself), each
// byte-identical by SHA-256. Run by scripts/tus-proxy-run; not a spec (it takes a while).

import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { finished } from 'node:stream/promises';
import { parseArgs } from 'node:util';
import assert from 'node:assert/strict';
import { BIN, freePort, launchBrowser, waitForUploads } from './helpers.mjs';

const MIB = 1024 * 1024;
const SECRET = 'tus-proxy-run-secret-0123456789';
const NGINX = process.env.NGINX_PATH ?? '/usr/sbin/nginx';
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const log = (message) => console.log(`${new Date().toISOString().slice(11, 19)} tus-proxy-run: ${message}`);

function parseSize(text) {
  const match = /^(\d+)\s*(MiB|GiB)$/i.exec(text);
  if (!match) throw new Error(`--size takes N MiB or N GiB, like 300MiB or 2GiB, not ${text}`);
  return Number(match[1]) * (match[2].toLowerCase() === 'gib' ? 1024 : 1) * MIB;
}

/** A child process that can be waited for and killed, by its own pid only. */
function start(command, args, options) {
  const child = spawn(command, args, options);
  child.ended = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  return child;
}

async function stopChild(child, signal = 'SIGTERM') {
  if (child.exitCode === null && child.signalCode === null) child.kill(signal);
  await child.ended;
}

/** Polls `check` every 50 ms until it holds, for at most `ms`. */
async function until(what, ms, check) {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    try {
      if (await check()) return;
    } catch (error) {
      // Not answering (restarting) is waited out; a check's own verdict is not.
      if (!(error instanceof TypeError)) throw error;
    }
    await sleep(50);
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** `size` random bytes in `file`, and their SHA-256, without holding them in memory. */
async function writeSource(file, size) {
  const hash = createHash('sha256');
  const out = createWriteStream(file);
  for (let left = size; left > 0; left -= 16 * MIB) {
    const block = randomBytes(Math.min(16 * MIB, left));
    hash.update(block);
    if (!out.write(block)) await new Promise((resolve) => out.once('drain', resolve));
  }
  out.end();
  await finished(out);
  return hash.digest('hex');
}

async function sha256OfUrl(url) {
  const response = await fetch(url);
  assert.equal(response.status, 200, `GET ${url}`);
  const hash = createHash('sha256');
  for await (const piece of response.body) hash.update(piece);
  return hash.digest('hex');
}

const { values } = parseArgs({ options: { size: { type: 'string', default: '300MiB' } } });
const size = parseSize(values.size);
const folder = await mkdtemp(path.join(process.env.TMPDIR ?? '/var/tmp', 'blobdrop-tus-proxy-'));
const children = new Set();
let blobdrop = null;
let nginx = null;

const serverPort = await freePort();
const proxyPort = await freePort();
const direct = `http://127.0.0.1:${serverPort}`;
const proxied = `http://127.0.0.1:${proxyPort}`;
const auth = { Authorization: `Bearer ${SECRET}` };

async function startBlobdrop() {
  blobdrop = start(BIN, [], {
    env: {
      ...process.env,
      BLOBDROP_DB: path.join(folder, 'blobdrop.db'),
      BLOBDROP_PORT: String(serverPort),
      BLOBDROP_BIND: '127.0.0.1',
      BLOBDROP_SHARED_SECRET: SECRET,
      BLOBDROP_PUBLIC_URL: proxied,
      RUST_LOG: 'warn',
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  children.add(blobdrop);
  await until('blobdrop to answer /healthz', 30_000, async () => (await fetch(`${direct}/healthz`)).ok);
}

async function startNginx() {
  const conf = path.join(folder, 'nginx.conf');
  const user = process.getuid?.() === 0 ? 'user root root;' : '';
  await mkdir(path.join(folder, 'nginx'), { recursive: true });
  await writeFile(conf, `${user}
worker_processes 1;
daemon off;
pid ${folder}/nginx/nginx.pid;
error_log ${folder}/nginx/error.log warn;
events { worker_connections 64; }
http {
    access_log off;
    client_body_temp_path ${folder}/nginx/body;
    proxy_temp_path ${folder}/nginx/proxy;
    fastcgi_temp_path ${folder}/nginx/fastcgi;
    uwsgi_temp_path ${folder}/nginx/uwsgi;
    scgi_temp_path ${folder}/nginx/scgi;
    server {
        listen 127.0.0.1:${proxyPort};
        # The cap of a proxy (Cloudflare's free plan caps bodies at 100 MB) the upload must pass.
        client_max_body_size 100m;
        location / {
            proxy_pass ${direct};
            proxy_http_version 1.1;
            proxy_set_header Host $http_host;
            proxy_request_buffering off;
            proxy_buffering off;
            proxy_read_timeout 300s;
        }
    }
}
`);
  // Its output ignored: a worker outlives a master killed with SIGKILL and would hold the pipe.
  nginx = start(NGINX, ['-c', conf, '-e', `${folder}/nginx/error.log`], { stdio: 'ignore' });
  children.add(nginx);
  await until('nginx to answer', 10_000, async () => (await fetch(`${proxied}/healthz`)).ok);
}

/** What the server says of its files and unfinished uploads, asked of it directly (not through nginx). */
async function system() {
  return (await fetch(`${direct}/api/system`, { headers: auth })).json();
}

async function heldBytes() {
  return (await system()).unfinished_upload_bytes;
}

/** Waits until the upload holds `bytes`, then cuts its connection the `how` way. */
async function cutAt(bytes, how) {
  const files = (await system()).files;
  await until(`the upload to pass ${bytes} bytes`, 30 * 60_000, async () => {
    const now = await system();
    if (now.files > files) throw new Error(`the upload finished before it was cut at ${bytes} bytes`);
    return now.unfinished_upload_bytes >= bytes;
  });
  const before = await heldBytes();
  if (how === 'kill') {
    log(`at ${before} bytes: kill -9 the server, start it again on the same database`);
    await stopChild(blobdrop, 'SIGKILL');
    children.delete(blobdrop);
    await startBlobdrop();
  } else {
    log(`at ${before} bytes: restart nginx`);
    await stopChild(nginx, 'SIGTERM');
    children.delete(nginx);
    await startNginx();
  }
  const kept = await heldBytes();
  assert.ok(kept > 0, `the server kept what was committed before the cut (${kept} bytes)`);
  return kept;
}

/** The two cuts, a third and two thirds of the way. */
async function cutTwice() {
  return [await cutAt(Math.floor(size / 3), 'kill'), await cutAt(Math.floor((2 * size) / 3), 'nginx')];
}

/** `blobdrop upload --chunk-size 50MiB FILE`, run again after each failure (at most 10 runs). */
async function cliUpload(file) {
  const env = { ...process.env, BLOBDROP_URL: proxied, BLOBDROP_TOKEN: SECRET, XDG_CACHE_HOME: path.join(folder, 'cache') };
  let runs = 0;
  for (;;) {
    runs += 1;
    const child = start(BIN, ['upload', '--chunk-size', '50MiB', file], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(child);
    let out = '';
    child.stdout.on('data', (piece) => { out += piece; });
    child.stderr.on('data', (piece) => { out += piece; });
    const { code } = await child.ended;
    children.delete(child);
    const link = /https?:\/\/\S+\/f\/\S+/.exec(out)?.[0];
    if (code === 0 && link) return { link, runs };
    assert.ok(runs < 10, `the command-line upload did not finish in 10 runs; last said: ${out}`);
    log(`the command-line upload stopped (run ${runs}, exit ${code}): ${out.trim().split('\n').pop()}; running it again`);
    // Once the server answers through nginx again, as a user would try again.
    await sleep(500);
    await until('the server and nginx to answer', 30_000, async () => (await fetch(`${proxied}/healthz`)).ok);
  }
}

let failed = false;
try {
  const file = path.join(folder, 'large.bin');
  log(`writing ${values.size} of random bytes to ${file}`);
  const digest = await writeSource(file, size);
  await startBlobdrop();
  await startNginx();

  log('the command-line client');
  let started = Date.now();
  const cliCuts = cutTwice();
  cliCuts.catch(() => {}); // awaited below; a failure meanwhile must not end the process unreported
  const cli = await cliUpload(file);
  const cliKept = await cliCuts;
  const cliSeconds = (Date.now() - started) / 1000;
  assert.equal(await sha256OfUrl(cli.link), digest, 'the command-line upload is byte-identical');
  log(`command-line upload done in ${cliSeconds.toFixed(1)} s, ${cli.runs} runs, kept ${cliKept.join(' and ')} bytes across the cuts`);

  log('the web page in headless Chromium');
  const browser = await launchBrowser();
  try {
    const context = await browser.newContext({ baseURL: proxied });
    const page = await context.newPage();
    await page.goto('/login');
    await page.fill('#secret', SECRET);
    await Promise.all([page.waitForURL(`${proxied}/`), page.click('#login-form [type=submit]')]);
    started = Date.now();
    await page.setInputFiles('#file-input', file);
    const pageKept = await cutTwice();
    const [row] = await waitForUploads(page, 1, { timeout: 30 * 60_000 });
    const pageSeconds = (Date.now() - started) / 1000;
    assert.equal(row.status, 'Done', `the page's upload ended: ${row.status}`);
    assert.equal(await sha256OfUrl(row.link), digest, 'the web page upload is byte-identical');
    log(`web page upload done in ${pageSeconds.toFixed(1)} s, kept ${pageKept.join(' and ')} bytes across the cuts`);
  } finally {
    await browser.close();
  }
  const end = await system();
  if (end.unfinished_uploads !== 0 && process.env.TUS_PROXY_RUN_DEBUG) {
    const { execFileSync } = await import('node:child_process');
    console.log(execFileSync('sqlite3', [path.join(folder, 'blobdrop.db'),
      'SELECT r.file_id, r.upload_offset, r.upload_length, r.created_at, f.filename FROM resumable_uploads r JOIN files f ON f.id = r.file_id; SELECT id, filename, file_size, created_at, state FROM files;'], { encoding: 'utf8' }));
  }
  assert.equal(end.unfinished_uploads, 0, 'each cut upload was resumed, none started over and left behind');
  assert.equal(end.files, 2);
  log(`OK: ${values.size} through nginx (client_max_body_size 100m), cut twice each way, SHA-256 ${digest} both times`);
} catch (error) {
  failed = true;
  console.error(error);
} finally {
  // nginx with SIGQUIT, so that its master stops its workers; the rest with SIGKILL.
  for (const child of children) await stopChild(child, child === nginx ? 'SIGQUIT' : 'SIGKILL');
  await rm(folder, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
