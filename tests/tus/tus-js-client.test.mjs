// tus-js-client (the tus project's own client, pinned in package.json) against the real blobdrop
// binary: an upload aborted part-way resumes from the stored upload URL and finishes
// byte-identical by SHA-256, in pieces small enough for a proxy that caps request bodies.

import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as tus from 'tus-js-client';

const here = path.dirname(fileURLToPath(import.meta.url));
const BIN = path.resolve(here, process.env.BLOBDROP_BIN ?? '../../target/debug/blobdrop');
const SECRET = 'tus-client-test-secret-0123456789';
const MIB = 1024 * 1024;

async function freePort() {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.on('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

/** The real binary on a temporary database; resolves once /healthz answers. */
async function startServer() {
  const folder = await mkdtemp(path.join(tmpdir(), 'blobdrop-tus-'));
  const port = await freePort();
  const child = spawn(BIN, [], {
    env: {
      ...process.env,
      BLOBDROP_DB: path.join(folder, 'blobdrop.db'),
      BLOBDROP_PORT: String(port),
      BLOBDROP_SHARED_SECRET: SECRET,
    },
    stdio: ['ignore', 'ignore', 'ignore'],
  });
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 200; i++) {
    try {
      if ((await fetch(`${base}/healthz`)).ok) {
        return { base, stop: async () => { child.kill('SIGKILL'); await rm(folder, { recursive: true, force: true }); } };
      }
    } catch {}
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  child.kill('SIGKILL');
  throw new Error('the server did not start');
}

/** Deterministic bytes that do not repeat with the chunk size. */
function bytes(length) {
  const out = Buffer.alloc(length);
  let state = 0x9e3779b9;
  for (let i = 0; i < length; i++) {
    state ^= state << 13; state ^= state >>> 17; state ^= state << 5;
    out[i] = state & 0xff;
  }
  return out;
}

const sha256 = (buffer) => createHash('sha256').update(buffer).digest('hex');
const auth = { Authorization: `Bearer ${SECRET}` };

async function headOffset(url) {
  const response = await fetch(url, { method: 'HEAD', headers: { ...auth, 'Tus-Resumable': '1.0.0' } });
  assert.equal(response.status, 200);
  return Number(response.headers.get('upload-offset'));
}

test('an upload aborted part-way resumes from its stored URL and finishes byte-identical', { timeout: 60_000 }, async () => {
  const server = await startServer();
  try {
    const file = bytes(6 * MIB + 12_345);
    // 1 MiB PATCHes (what a proxy capping bodies needs), aborted after the second: the server
    // keeps what it committed.
    const storedUrl = await new Promise((resolve, reject) => {
      const upload = new tus.Upload(file, {
        endpoint: `${server.base}/api/uploads`,
        headers: auth,
        chunkSize: MIB,
        metadata: { filename: 'from-tus-js-client.bin', filetype: 'application/octet-stream' },
        retryDelays: null,
        onChunkComplete(_size, accepted) {
          if (accepted >= 2 * MIB) {
            upload.abort(false).then(() => resolve(upload.url), reject);
          }
        },
        onSuccess() { reject(new Error('the upload finished before it was aborted')); },
        onError: reject,
      });
      upload.start();
    });
    let offset = 0;
    for (let i = 0; i < 100 && offset === 0; i++) {
      offset = await headOffset(storedUrl);
      if (offset === 0) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.ok(offset > 0 && offset < file.length, `the aborted upload kept ${offset} bytes`);

    // Resumed from the stored URL, in 2.5 MiB PATCHes that end inside chunks.
    let fileUrl = null;
    let firstProgress = null;
    await new Promise((resolve, reject) => {
      const upload = new tus.Upload(file, {
        uploadUrl: storedUrl,
        headers: auth,
        chunkSize: 2.5 * MIB,
        retryDelays: null,
        onProgress(sent) { firstProgress ??= sent; },
        onAfterResponse(_request, response) {
          fileUrl = response.getHeader('X-File-Url') ?? fileUrl;
        },
        onSuccess: resolve,
        onError: reject,
      });
      upload.start();
    });
    assert.ok(firstProgress > offset - 1, `the resumed upload started at ${offset}, not 0 (${firstProgress})`);
    assert.ok(fileUrl, 'the completing PATCH answered X-File-Url');
    const downloaded = Buffer.from(await (await fetch(fileUrl)).arrayBuffer());
    assert.equal(sha256(downloaded), sha256(file));
    const listed = await (await fetch(`${server.base}/api/files`, { headers: auth })).json();
    assert.equal(listed.length, 1);
    assert.equal(listed[0].sha256, sha256(file));
    assert.equal(listed[0].filename, 'from-tus-js-client.bin');
  } finally {
    await server.stop();
  }
});

test('parallelUploads: 3 sends three partial uploads the server joins into one file, byte-identical', { timeout: 60_000 }, async () => {
  const server = await startServer();
  try {
    // A length no part of which is a whole number of 32 KiB chunks: the join re-chunks.
    const file = bytes(5 * MIB + 777);
    let fileUrl = null;
    const concat = [];
    await new Promise((resolve, reject) => {
      const upload = new tus.Upload(file, {
        endpoint: `${server.base}/api/uploads`,
        headers: auth,
        parallelUploads: 3,
        chunkSize: MIB,
        metadata: { filename: 'in-parallel.bin', filetype: 'application/octet-stream' },
        retryDelays: null,
        onBeforeRequest(request) {
          const header = request.getHeader('Upload-Concat');
          if (header && request.getMethod() === 'POST') concat.push(header);
        },
        onAfterResponse(_request, response) {
          fileUrl = response.getHeader('X-File-Url') ?? fileUrl;
        },
        onSuccess: resolve,
        onError: reject,
      });
      upload.start();
    });
    assert.equal(concat.filter((header) => header === 'partial').length, 3, `${concat}`);
    assert.ok(concat.some((header) => header.startsWith('final;')), 'the client asked for a final upload');
    assert.ok(fileUrl, 'the final upload answered X-File-Url');
    const downloaded = Buffer.from(await (await fetch(fileUrl)).arrayBuffer());
    assert.equal(sha256(downloaded), sha256(file));
    const listed = await (await fetch(`${server.base}/api/files`, { headers: auth })).json();
    assert.equal(listed.length, 1, 'the partial uploads are no files');
    assert.equal(listed[0].sha256, sha256(file));
    assert.equal(listed[0].filename, 'in-parallel.bin');
  } finally {
    await server.stop();
  }
});

test('the web page serves the pinned tus-js-client build and its licence, byte for byte', { timeout: 30_000 }, async () => {
  const server = await startServer();
  try {
    const pinned = JSON.parse(await readFile(path.join(here, 'package.json'), 'utf8')).dependencies['tus-js-client'];
    const installed = JSON.parse(await readFile(path.join(here, 'node_modules/tus-js-client/package.json'), 'utf8'));
    assert.equal(installed.version, pinned, 'npm ci installed the pinned version');
    for (const [served, shipped] of [
      ['/static/vendor/tus.min.js', 'node_modules/tus-js-client/dist/tus.min.js'],
      ['/static/vendor/tus-js-client.LICENSE', 'node_modules/tus-js-client/LICENSE'],
    ]) {
      const response = await fetch(`${server.base}${served}`);
      assert.equal(response.status, 200, served);
      const body = Buffer.from(await response.arrayBuffer());
      assert.equal(sha256(body), sha256(await readFile(path.join(here, shipped))), `${served} is the package's ${shipped}`);
    }
  } finally {
    await server.stop();
  }
});
