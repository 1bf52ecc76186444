// The upload list's numbers, checked without a browser: static/js/format.js imports nothing and
// touches no document, so Node can load it alone.

import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import test from 'node:test';

// Through a data: URL, as an ES module: static/ has no package.json saying so, and older Node 20
// releases would load a .js file there as CommonJS.
const source = await readFile(new URL('../../static/js/format.js', import.meta.url), 'utf8');
const { formatBytes, formatSpeed, formatTimeLeft, pastedName } = await import(
  `data:text/javascript;charset=utf-8,${encodeURIComponent(source)}`
);

test('sizes and speeds use the binary units of the files page', () => {
  assert.equal(formatBytes(0), '0 B');
  assert.equal(formatBytes(1023), '1023 B');
  assert.equal(formatBytes(4971), '4.9 KiB');
  assert.equal(formatBytes(1_572_864), '1.5 MiB');
  assert.equal(formatBytes(150 * 1024 * 1024), '150 MiB');
  assert.equal(formatBytes(3 * 1024 ** 4), '3.0 TiB');
  assert.equal(formatSpeed(3.1 * 1024 * 1024), '3.1 MiB/s');
});

test('time left reads like a clock, two units at most, never zero', () => {
  assert.equal(formatTimeLeft(0.2), '1 s left');
  assert.equal(formatTimeLeft(4), '4 s left');
  assert.equal(formatTimeLeft(60), '1 min left');
  assert.equal(formatTimeLeft(125), '2 min 5 s left');
  assert.equal(formatTimeLeft(3600), '1 h left');
  assert.equal(formatTimeLeft(3 * 3600 + 5 * 60 + 9), '3 h 5 min left');
  assert.equal(formatTimeLeft(Infinity), '');
});

test('pasted files are named after the local time', () => {
  assert.equal(pastedName('txt', new Date(2024, 4, 1, 13, 45, 2)), 'pasted-2024-05-01-134502.txt');
  assert.equal(pastedName('png', new Date(2024, 11, 31, 9, 5, 59)), 'pasted-2024-12-31-090559.png');
});
